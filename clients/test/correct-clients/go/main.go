// A correct client of the Password Manager API v6 in Go's standard library, for `pmv6 clients
// run`: many creates, every list paged by Link rel="next", records printed with the word
// "password" (a struct dump with an empty Password field), several calls under one deadline with
// a timeout each; every failure is one line with the server's message (or the status of a page
// that is not JSON) and a non-zero exit, never a panic.
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

var (
	api     = os.Getenv("PMV6_API_URL")
	client  = &http.Client{Timeout: 10 * time.Second}
	linkRel = regexp.MustCompile(`<([^>]*)>\s*;\s*rel="?([^",;]+)"?`)
)

// Password is a list item as this client keeps it; the list shows no password, so Password stays empty.
type Password struct {
	ID         int    `json:"id"`
	Name       string `json:"name"`
	Password   string `json:"-"`
	ExpiryDate string `json:"expiry_date"`
}

type apiError struct{ msg string }

func (e *apiError) Error() string { return e.msg }

func call(method, url string, body interface{}) (string, []byte, error) {
	var reader io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return "", nil, err
		}
		reader = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, reader)
	if err != nil {
		return "", nil, err
	}
	req.SetBasicAuth(os.Getenv("PMV6_USER"), os.Getenv("PMV6_PASSWORD"))
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("User-Agent", "pmv6-correct-go/1")
	res, err := client.Do(req)
	if err != nil {
		return "", nil, &apiError{"no usable reply: " + err.Error()}
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return "", nil, &apiError{fmt.Sprintf("%d, the reply was cut off: %v", res.StatusCode, err)}
	}
	if res.StatusCode >= 400 {
		var e struct {
			Message string `json:"message"`
		}
		if strings.Contains(res.Header.Get("Content-Type"), "json") && json.Unmarshal(data, &e) == nil && e.Message != "" {
			return "", nil, &apiError{fmt.Sprintf("%d %s", res.StatusCode, e.Message)}
		}
		return "", nil, &apiError{fmt.Sprintf("HTTP %d (%s), not the API's error object", res.StatusCode, res.Header.Get("Content-Type"))}
	}
	if len(data) > 0 && !json.Valid(data) {
		return "", nil, &apiError{fmt.Sprintf("%d: the reply is not JSON", res.StatusCode)}
	}
	return res.Header.Get("Link"), data, nil
}

func listAll(path string) ([]Password, error) {
	var items []Password
	for url := api + path; url != ""; {
		link, data, err := call("GET", url, nil)
		if err != nil {
			return nil, err
		}
		var page []Password
		if err := json.Unmarshal(data, &page); err != nil {
			return nil, &apiError{"a list that is not a JSON array: " + err.Error()}
		}
		items = append(items, page...)
		url = ""
		for _, m := range linkRel.FindAllStringSubmatch(link, -1) {
			if m[2] == "next" {
				url = m[1]
			}
		}
	}
	return items, nil
}

func main() {
	errors := 0
	project, _ := strconv.Atoi(os.Getenv("PMV6_PROJECT_ID"))
	var created []int
	for i := 0; i < 32; i++ {
		secret := make([]byte, 12)
		_, _ = rand.Read(secret)
		_, data, err := call("POST", api+"passwords.json", map[string]interface{}{"name": fmt.Sprintf("pmv6-go-%d", i), "project_id": project, "password": hex.EncodeToString(secret)})
		if err != nil {
			fmt.Fprintf(os.Stderr, "error: could not create password: %v\n", err)
			errors++
			break
		}
		var obj struct {
			ID int `json:"id"`
		}
		_ = json.Unmarshal(data, &obj)
		created = append(created, obj.ID)
	}
	if len(created) == 32 {
		fmt.Println("created 32 passwords")
	}
	if passwords, err := listAll("passwords.json"); err != nil {
		fmt.Fprintf(os.Stderr, "error: failed to list passwords: %v\n", err)
		errors++
	} else {
		for _, p := range passwords {
			fmt.Printf("%+v\n", p)
		}
		fmt.Printf("listed %d passwords\n", len(passwords))
	}
	if projects, err := listAll("projects.json"); err != nil {
		fmt.Fprintf(os.Stderr, "error: failed to list projects: %v\n", err)
		errors++
	} else {
		fmt.Printf("listed %d projects\n", len(projects))
	}
	for _, id := range created {
		if _, _, err := call("DELETE", fmt.Sprintf("%spasswords/%d.json", api, id), nil); err != nil {
			fmt.Fprintf(os.Stderr, "error: failed to delete password %d: %v\n", id, err)
			errors++
			break
		}
	}
	if errors > 0 {
		os.Exit(1)
	}
}
