// Command hrobot_go_check drives a Robot webservice (the simulator) through hrobot-go, the library
// the official CCM reads dedicated servers with, the calls it makes, and checks what comes back. It
// prints one JSON line per check and a summary; the exit code is the number of failed checks.
//
//	HETZNER_ENDPOINT=http://127.0.0.1:8080/robot ROBOT_USER=... ROBOT_PASSWORD=... hrobot_go_check
//
// The simulator must hold a server named "check-1" (IPv4 and IPv6), one named "check-v4only" without
// IPv6, and "check-off" powered off; ROBOT_LIST_LIMIT is the hourly limit of the server list.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	hrobot "github.com/syself/hrobot-go"
	"github.com/syself/hrobot-go/models"
)

var failed int

func check(name string, fn func() error) {
	err := fn()
	res := map[string]any{"check": name, "ok": err == nil}
	if err != nil {
		res["error"] = err.Error()
		failed++
	}
	line, _ := json.Marshal(res)
	fmt.Println(string(line))
}

func expect(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf(format, args...)
}

func client(user, password string) hrobot.RobotClient {
	c := hrobot.NewBasicAuthClient(user, password)
	c.SetBaseURL(os.Getenv("HETZNER_ENDPOINT"))
	c.SetUserAgent("hrobot-go-check")
	return c
}

func byName(list []models.Server, name string) *models.Server {
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	return nil
}

func main() {
	c := client(os.Getenv("ROBOT_USER"), os.Getenv("ROBOT_PASSWORD"))
	var list []models.Server
	check("server list: every field the CCM reads", func() (err error) {
		list, err = c.ServerGetList()
		if err != nil {
			return err
		}
		s := byName(list, "check-1")
		if err := expect(s != nil, "check-1 not listed among %d servers", len(list)); err != nil {
			return err
		}
		return expect(s.ServerNumber > 0 && s.ServerIP != "" && s.ServerIPv6Net != "" && s.Product != "" && s.Dc != "" &&
			s.Status == "ready", "check-1: %+v", *s)
	})
	check("server list: a server without IPv6 has an empty IPv6 net", func() error {
		s := byName(list, "check-v4only")
		return expect(s != nil && s.ServerIP != "" && s.ServerIPv6Net == "", "check-v4only: %+v", s)
	})
	check("server get by number, and SERVER_NOT_FOUND", func() error {
		want := byName(list, "check-1")
		if want == nil {
			return fmt.Errorf("no check-1")
		}
		s, err := c.ServerGet(want.ServerNumber)
		if err != nil {
			return err
		}
		if err := expect(s.Name == "check-1" && s.ServerIP == want.ServerIP && s.Reset, "get: %+v", *s); err != nil {
			return err
		}
		_, err = c.ServerGet(1)
		return expect(models.IsError(err, models.ErrorCodeServerNotFound), "unknown number: %v", err)
	})
	check("reset: operating status of a running and a powered-off server", func() error {
		on, off := byName(list, "check-1"), byName(list, "check-off")
		if on == nil || off == nil {
			return fmt.Errorf("servers missing")
		}
		r1, err := c.ResetGet(on.ServerNumber)
		if err != nil {
			return err
		}
		r2, err := c.ResetGet(off.ServerNumber)
		if err != nil {
			return err
		}
		return expect(r1.OperatingStatus == "running" && r2.OperatingStatus == "shut off" && len(r1.Type) > 0,
			"operating status %q / %q", r1.OperatingStatus, r2.OperatingStatus)
	})
	check("reset: a power press turns a running server off", func() error {
		on := byName(list, "check-1")
		post, err := c.ResetSet(on.ServerNumber, &models.ResetSetInput{Type: models.ResetTypePower})
		if err != nil {
			return err
		}
		r, err := c.ResetGet(on.ServerNumber)
		if err != nil {
			return err
		}
		if err := expect(post.Type == "power" && r.OperatingStatus == "shut off", "after power: %q", r.OperatingStatus); err != nil {
			return err
		}
		_, err = c.ResetSet(on.ServerNumber, &models.ResetSetInput{Type: models.ResetTypePower})
		return err
	})
	check("server rename", func() error {
		s := byName(list, "check-v4only")
		got, err := c.ServerSetName(s.ServerNumber, &models.ServerSetNameInput{Name: "check-renamed"})
		if err != nil {
			return err
		}
		if err := expect(got.Name == "check-renamed", "renamed: %q", got.Name); err != nil {
			return err
		}
		_, err = c.ServerSetName(s.ServerNumber, &models.ServerSetNameInput{Name: "check-v4only"})
		return err
	})
	check("wrong credentials: UNAUTHORIZED", func() error {
		_, err := client(os.Getenv("ROBOT_USER"), "wrong").ServerGetList()
		return expect(models.IsError(err, models.ErrorCodeUnauthorized), "wrong password: %v", err)
	})
	check("the server list's hourly limit: RATE_LIMIT_EXCEEDED", func() error {
		limit, _ := strconv.Atoi(os.Getenv("ROBOT_LIST_LIMIT"))
		for i := 1; i < limit; i++ { // the first check used one
			if _, err := c.ServerGetList(); err != nil {
				return fmt.Errorf("request %d of %d: %w", i+1, limit, err)
			}
		}
		_, err := c.ServerGetList()
		if err := expect(models.IsError(err, models.ErrorCodeRateLimitExceeded), "request %d: %v", limit+1, err); err != nil {
			return err
		}
		// Other endpoints have limits of their own.
		_, err = c.ServerGet(byName(list, "check-1").ServerNumber)
		return err
	})
	summary, _ := json.Marshal(map[string]any{"summary": true, "failed": failed})
	fmt.Println(string(summary))
	os.Exit(min(failed, 100))
}
