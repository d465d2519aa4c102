#!/bin/sh
# A correct client of the Password Manager API v6 as a POSIX shell script with curl, for
# `pmv6 clients run`: many creates, every list paged by Link rel="next", records printed with the
# word "password", several calls under one deadline with a timeout each (--max-time); every
# failure is one line with the server's message (or the status of a page that is not JSON) and a
# non-zero exit.
set -u
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
errors=0

# call METHOD URL [BODY]: the body in $tmp/body, the headers in $tmp/headers; fails with a message.
call() {
  if [ $# -ge 3 ]; then
    code=$(curl -sS --max-time 10 -X "$1" -u "$PMV6_USER:$PMV6_PASSWORD" \
      -H 'Content-Type: application/json; charset=utf-8' -A 'pmv6-correct-shell/1' \
      -D "$tmp/headers" -o "$tmp/body" -w '%{http_code}' --data-binary "$3" "$2" 2>"$tmp/err")
  else
    code=$(curl -sS --max-time 10 -X "$1" -u "$PMV6_USER:$PMV6_PASSWORD" \
      -H 'Content-Type: application/json; charset=utf-8' -A 'pmv6-correct-shell/1' \
      -D "$tmp/headers" -o "$tmp/body" -w '%{http_code}' "$2" 2>"$tmp/err")
  fi
  rc=$?
  if [ $rc -ne 0 ]; then
    message="no usable reply: $(head -c 200 "$tmp/err" | tr '\n' ' ') (curl exit $rc)"
    return 1
  fi
  case "$code" in
    2??) return 0 ;;
  esac
  if grep -qi '^content-type:.*json' "$tmp/headers"; then
    text=$(sed -n 's/.*"message" *: *"\(\([^"\\]*\(\\.\)*\)*\)".*/\1/p' "$tmp/body" | head -n 1 | sed 's/\\"/"/g')
    message="$code ${text:-HTTP $code}"
  else
    message="HTTP $code, not the API's error object"
  fi
  return 1
}

# list_all PATH: every item's id and name, one per line as "ID NAME", page by page (Link rel="next").
list_all() {
  url="$PMV6_API_URL$1"
  : >"$tmp/items"
  while [ -n "$url" ]; do
    call GET "$url" || return 1
    # The id and name of each item of the top-level array: a small JSON scanner (depth and strings).
    awk 'BEGIN { RS = "\001" }
      {
        depth = 0; instr = 0; esc = 0; tok = ""; key = ""; id = ""; name = ""
        n = length($0)
        for (i = 1; i <= n; i++) {
          c = substr($0, i, 1)
          if (instr) {
            if (esc) { esc = 0; tok = tok c } else if (c == "\\") { esc = 1 } else if (c == "\"") { instr = 0 } else { tok = tok c }
            continue
          }
          if (c == "\"") { instr = 1; tok = ""; continue }
          if (c == ":" && depth == 2) { key = tok; tok = ""; continue }
          if (c == "{" || c == "[") { depth++; continue }
          if (c == "," || c == "}" || c == "]") {
            if (depth == 2 && key == "name") name = tok
            if (depth == 2 && key == "id") id = tok
            key = ""
            if (c == "}" && depth == 2) { print id, name; id = ""; name = "" }
            if (c != ",") depth--
            tok = ""; continue
          }
          if (c != " ") tok = tok c
        }
      }' "$tmp/body" >>"$tmp/items"
    url=$(tr -d '\r' <"$tmp/headers" | grep -i '^link:' | tr ',' '\n' | sed -n 's/.*<\([^>]*\)> *; *rel="\{0,1\}next"\{0,1\}.*/\1/p' | head -n 1)
  done
}

i=0
: >"$tmp/created"
while [ $i -lt 32 ]; do
  secret=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
  if ! call POST "${PMV6_API_URL}passwords.json" "{\"name\":\"pmv6-shell-$i\",\"project_id\":$PMV6_PROJECT_ID,\"password\":\"$secret\"}"; then
    echo "error: could not create password: $message" >&2
    errors=$((errors + 1))
    break
  fi
  id=$(sed -n 's/.*"id" *: *\([0-9]*\).*/\1/p' "$tmp/body")
  echo "$id" >>"$tmp/created"
  i=$((i + 1))
done
[ $i -eq 32 ] && echo "created 32 passwords"

if list_all passwords.json; then
  while read -r id name; do echo "password $id: $name"; done <"$tmp/items"
  echo "listed $(wc -l <"$tmp/items" | tr -d ' ') passwords"
else
  echo "error: failed to list passwords: $message" >&2
  errors=$((errors + 1))
fi

if list_all projects.json; then
  echo "listed $(wc -l <"$tmp/items" | tr -d ' ') projects"
else
  echo "error: failed to list projects: $message" >&2
  errors=$((errors + 1))
fi

while read -r id; do
  if ! call DELETE "${PMV6_API_URL}passwords/$id.json"; then
    echo "error: failed to delete password $id: $message" >&2
    errors=$((errors + 1))
    break
  fi
done <"$tmp/created"

[ $errors -eq 0 ]
