// Command hcloud_go_check drives a Hetzner Cloud API (the simulator) through hcloud-go, the library
// the hcloud CLI, the Terraform provider and the official CCM are built on, the way they use it, and
// checks what comes back. It prints one JSON line per check and a summary; the exit code is the
// number of failed checks (capped at 100).
//
//	HCLOUD_ENDPOINT=http://127.0.0.1:8080/v1 HCLOUD_TOKEN=... hcloud_go_check
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

type result struct {
	Check string `json:"check"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

type run struct {
	ctx     context.Context
	c       *hcloud.Client
	calls   int
	failed  int
	results []result
}

// countingTransport counts the HTTP requests hcloud-go makes.
type countingTransport struct{ r *run }

func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.r.calls++
	return http.DefaultTransport.RoundTrip(req)
}

func (r *run) check(name string, fn func() error) {
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v", p)
			}
		}()
		return fn()
	}()
	res := result{Check: name, OK: err == nil}
	if err != nil {
		res.Error = err.Error()
		r.failed++
	}
	line, _ := json.Marshal(res)
	fmt.Println(string(line))
}

// wait waits for actions the way hcloud-go's users do.
func (r *run) wait(actions ...*hcloud.Action) error {
	return r.c.Action.WaitFor(r.ctx, actions...)
}

func expect(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf(format, args...)
}

func cidr(s string) *net.IPNet {
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		panic(err)
	}
	return n
}

func main() {
	r := &run{ctx: context.Background()}
	r.c = hcloud.NewClient(
		hcloud.WithEndpoint(os.Getenv("HCLOUD_ENDPOINT")),
		hcloud.WithToken(os.Getenv("HCLOUD_TOKEN")),
		hcloud.WithApplication("hcloud-go-check", "1"),
		hcloud.WithPollOpts(hcloud.PollOpts{BackoffFunc: hcloud.ConstantBackoff(50 * time.Millisecond)}),
		hcloud.WithHTTPClient(&http.Client{Transport: countingTransport{r}, Timeout: 30 * time.Second}),
	)
	st := &state{}
	checkCatalog(r, st)
	checkSSHKeysAndImages(r, st)
	checkServers(r, st)
	checkPrimaryIPs(r, st)
	checkNetworks(r, st)
	checkLoadBalancers(r, st)
	checkLoadBalancerActions(r)
	checkCertificates(r, st)
	checkOtherResources(r)
	checkFirewalls(r)
	checkCrossResource(r, st)
	summary, _ := json.Marshal(map[string]any{"summary": true, "failed": r.failed, "calls": r.calls})
	fmt.Println(string(summary))
	os.Exit(min(r.failed, 100))
}

type state struct {
	serverType *hcloud.ServerType
	location   *hcloud.Location
	image      *hcloud.Image
	sshKey     *hcloud.SSHKey
	servers    []*hcloud.Server
	network    *hcloud.Network
}

func checkCatalog(r *run, st *state) {
	r.check("server types: list, get by name and ID, deprecations", func() error {
		types, err := r.c.ServerType.All(r.ctx)
		if err != nil {
			return err
		}
		byName := map[string]*hcloud.ServerType{}
		for _, t := range types {
			byName[t.Name] = t
		}
		if err := expect(byName["cx23"] != nil && byName["cpx22"] != nil, "cx23/cpx22 missing"); err != nil {
			return err
		}
		if err := expect(byName["cpx21"] != nil && byName["cpx21"].IsDeprecated(), "cpx21 is not deprecated"); err != nil {
			return err
		}
		st.serverType, _, err = r.c.ServerType.GetByName(r.ctx, "cx23")
		if err != nil {
			return err
		}
		again, _, err := r.c.ServerType.GetByID(r.ctx, st.serverType.ID)
		if err != nil {
			return err
		}
		return expect(again != nil && again.Name == "cx23", "server type by ID: %v", again)
	})
	r.check("locations and datacenters", func() error {
		var err error
		st.location, _, err = r.c.Location.GetByName(r.ctx, "fsn1")
		if err != nil {
			return err
		}
		dcs, err := r.c.Datacenter.All(r.ctx)
		if err != nil {
			return err
		}
		return expect(st.location != nil && len(dcs) > 0, "location %v, %d datacenters", st.location, len(dcs))
	})
	r.check("pricing", func() error {
		p, _, err := r.c.Pricing.Get(r.ctx)
		if err != nil {
			return err
		}
		return expect(p.Image.PerGBMonth.Currency == "EUR" && len(p.ServerTypes) > 0 && len(p.LoadBalancerTypes) > 0,
			"pricing: %+v", p.Image)
	})
}

func checkSSHKeysAndImages(r *run, st *state) {
	r.check("ssh keys: create, get by name, update labels, duplicate refused", func() error {
		key, _, err := r.c.SSHKey.Create(r.ctx, hcloud.SSHKeyCreateOpts{
			Name:      "check",
			PublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHJlYWxseSBub3QgYSByZWFsIGtleSBhdCBhbGwhIQ== check",
			Labels:    map[string]string{"role": "check"},
		})
		if err != nil {
			return err
		}
		st.sshKey = key
		got, _, err := r.c.SSHKey.GetByName(r.ctx, "check")
		if err != nil || got == nil || got.Fingerprint == "" {
			return fmt.Errorf("get by name: %v %v", got, err)
		}
		_, _, err = r.c.SSHKey.Create(r.ctx, hcloud.SSHKeyCreateOpts{Name: "check", PublicKey: key.PublicKey})
		return expect(hcloud.IsError(err, hcloud.ErrorCodeUniquenessError), "duplicate key: %v", err)
	})
	r.check("images: system images by name and architecture", func() error {
		img, _, err := r.c.Image.GetByNameAndArchitecture(r.ctx, "ubuntu-24.04", hcloud.ArchitectureX86)
		if err != nil {
			return err
		}
		if err := expect(img != nil && img.Type == hcloud.ImageTypeSystem, "ubuntu-24.04: %v", img); err != nil {
			return err
		}
		st.image = img
		all, err := r.c.Image.AllWithOpts(r.ctx, hcloud.ImageListOpts{Type: []hcloud.ImageType{hcloud.ImageTypeSystem}})
		return expect(err == nil && len(all) >= 2, "system images: %d %v", len(all), err)
	})
}

func checkServers(r *run, st *state) {
	r.check("servers: create by name and by ID, wait for the create action", func() error {
		for i, byID := range []bool{false, true, false} {
			opts := hcloud.ServerCreateOpts{
				Name:     fmt.Sprintf("check-%d", i),
				Labels:   map[string]string{"app": "check", "index": fmt.Sprint(i)},
				SSHKeys:  []*hcloud.SSHKey{st.sshKey},
				Location: &hcloud.Location{Name: "fsn1"},
			}
			if byID {
				opts.ServerType = &hcloud.ServerType{ID: st.serverType.ID}
				opts.Image = &hcloud.Image{ID: st.image.ID}
			} else {
				opts.ServerType = &hcloud.ServerType{Name: "cx23"}
				opts.Image = &hcloud.Image{Name: "ubuntu-24.04"}
			}
			res, _, err := r.c.Server.Create(r.ctx, opts)
			if err != nil {
				return err
			}
			if err := r.wait(append([]*hcloud.Action{res.Action}, res.NextActions...)...); err != nil {
				return err
			}
			st.servers = append(st.servers, res.Server)
		}
		s, _, err := r.c.Server.GetByID(r.ctx, st.servers[1].ID)
		if err != nil {
			return err
		}
		return expect(s.ServerType.Name == "cx23" && s.Image != nil && s.Image.Name == "ubuntu-24.04" &&
			s.Status == hcloud.ServerStatusRunning, "server by ID: %s %v %s", s.ServerType.Name, s.Image, s.Status)
	})
	r.check("servers: label selectors and pagination", func() error {
		all, err := r.c.Server.AllWithOpts(r.ctx, hcloud.ServerListOpts{
			ListOpts: hcloud.ListOpts{LabelSelector: "app=check,index!=1", PerPage: 1},
		})
		if err != nil {
			return err
		}
		names := []string{}
		for _, s := range all {
			names = append(names, s.Name)
		}
		sort.Strings(names)
		return expect(strings.Join(names, ",") == "check-0,check-2", "selected: %v", names)
	})
	r.check("servers: power off, change type, power on, rename and labels", func() error {
		s := st.servers[0]
		a, _, err := r.c.Server.Poweroff(r.ctx, s)
		if err != nil {
			return err
		}
		if err := r.wait(a); err != nil {
			return err
		}
		a, _, err = r.c.Server.ChangeType(r.ctx, s, hcloud.ServerChangeTypeOpts{
			ServerType: &hcloud.ServerType{Name: "cx33"}, UpgradeDisk: false,
		})
		if err != nil {
			return err
		}
		if err := r.wait(a); err != nil {
			return err
		}
		a, _, err = r.c.Server.Poweron(r.ctx, s)
		if err != nil {
			return err
		}
		if err := r.wait(a); err != nil {
			return err
		}
		u, _, err := r.c.Server.Update(r.ctx, s, hcloud.ServerUpdateOpts{
			Name: "check-0-renamed", Labels: map[string]string{"app": "check"},
		})
		if err != nil {
			return err
		}
		return expect(u.Name == "check-0-renamed" && u.ServerType.Name == "cx33" && u.Status == hcloud.ServerStatusRunning &&
			len(u.Labels) == 1, "after changes: %s %s %s %v", u.Name, u.ServerType.Name, u.Status, u.Labels)
	})
	r.check("servers: actions are listed per server with the API's commands", func() error {
		actions, err := r.c.Server.Action.AllFor(r.ctx, st.servers[0], hcloud.ActionListOpts{Sort: []string{"id"}})
		if err != nil {
			return err
		}
		commands := []string{}
		for _, a := range actions {
			commands = append(commands, a.Command)
		}
		want := "create_server,stop_server,change_server_type,start_server"
		return expect(strings.Join(commands, ",") == want, "commands: %v", commands)
	})
}

func checkPrimaryIPs(r *run, st *state) {
	r.check("primary IPs: create, assign to a stopped server, unassign, delete", func() error {
		res, _, err := r.c.PrimaryIP.Create(r.ctx, hcloud.PrimaryIPCreateOpts{
			Name: "check-ip", Type: hcloud.PrimaryIPTypeIPv4, AssigneeType: "server", Location: "fsn1",
		})
		if err != nil {
			return err
		}
		if res.Action != nil {
			if err := r.wait(res.Action); err != nil {
				return err
			}
		}
		s := st.servers[2]
		a, _, err := r.c.Server.Poweroff(r.ctx, s)
		if err != nil {
			return err
		}
		if err := r.wait(a); err != nil {
			return err
		}
		old, _, err := r.c.PrimaryIP.GetByIP(r.ctx, s.PublicNet.IPv4.IP.String())
		if err != nil || old == nil {
			return fmt.Errorf("primary IP of the server: %v %v", old, err)
		}
		a, _, err = r.c.PrimaryIP.Unassign(r.ctx, old.ID)
		if err != nil {
			return err
		}
		if err := r.wait(a); err != nil {
			return err
		}
		a, _, err = r.c.PrimaryIP.Assign(r.ctx, hcloud.PrimaryIPAssignOpts{
			ID: res.PrimaryIP.ID, AssigneeID: s.ID, AssigneeType: "server",
		})
		if err != nil {
			return err
		}
		if err := r.wait(a); err != nil {
			return err
		}
		got, _, err := r.c.Server.GetByID(r.ctx, s.ID)
		if err != nil {
			return err
		}
		if err := expect(got.PublicNet.IPv4.IP.Equal(res.PrimaryIP.IP), "server IPv4 %v", got.PublicNet.IPv4.IP); err != nil {
			return err
		}
		_, err = r.c.PrimaryIP.Delete(r.ctx, old)
		return err
	})
}

func checkNetworks(r *run, st *state) {
	r.check("networks: subnets, routes, attach, delete_subnet, delete detaches", func() error {
		n, _, err := r.c.Network.Create(r.ctx, hcloud.NetworkCreateOpts{
			Name: "check-net", IPRange: cidr("10.0.0.0/8"),
			Subnets: []hcloud.NetworkSubnet{{Type: hcloud.NetworkSubnetTypeCloud, IPRange: cidr("10.0.0.0/24"),
				NetworkZone: hcloud.NetworkZoneEUCentral}},
		})
		if err != nil {
			return err
		}
		st.network = n
		a, _, err := r.c.Network.AddSubnet(r.ctx, n, hcloud.NetworkAddSubnetOpts{Subnet: hcloud.NetworkSubnet{
			Type: hcloud.NetworkSubnetTypeCloud, IPRange: cidr("10.1.0.0/24"), NetworkZone: hcloud.NetworkZoneEUCentral,
		}})
		if err != nil {
			return err
		}
		if err := r.wait(a); err != nil {
			return err
		}
		a, _, err = r.c.Server.AttachToNetwork(r.ctx, st.servers[1], hcloud.ServerAttachToNetworkOpts{Network: n})
		if err != nil {
			return err
		}
		if err := r.wait(a); err != nil {
			return err
		}
		s, _, err := r.c.Server.GetByID(r.ctx, st.servers[1].ID)
		if err != nil || len(s.PrivateNet) != 1 {
			return fmt.Errorf("attached server: %v %v", s, err)
		}
		a, _, err = r.c.Network.AddRoute(r.ctx, n, hcloud.NetworkAddRouteOpts{Route: hcloud.NetworkRoute{
			Destination: cidr("10.100.0.0/24"), Gateway: s.PrivateNet[0].IP,
		}})
		if err != nil {
			return err
		}
		if err := r.wait(a); err != nil {
			return err
		}
		a, _, err = r.c.Network.DeleteSubnet(r.ctx, n, hcloud.NetworkDeleteSubnetOpts{Subnet: hcloud.NetworkSubnet{IPRange: cidr("10.1.0.0/24")}})
		if err != nil {
			return err
		}
		if err := r.wait(a); err != nil {
			return err
		}
		got, _, err := r.c.Network.GetByID(r.ctx, n.ID)
		if err != nil {
			return err
		}
		if err := expect(len(got.Subnets) == 1 && len(got.Routes) == 1, "subnets %d routes %d", len(got.Subnets), len(got.Routes)); err != nil {
			return err
		}
		// The API documents that attached resources are detached when a network is deleted.
		if _, err := r.c.Network.Delete(r.ctx, n); err != nil {
			return err
		}
		s, _, err = r.c.Server.GetByID(r.ctx, st.servers[1].ID)
		return expect(err == nil && len(s.PrivateNet) == 0, "server after its network's deletion: %v %v", s, err)
	})
}

func checkLoadBalancers(r *run, st *state) {
	r.check("load balancers: create with type by name, targets of all three kinds, services, type change, protection, rDNS, delete", func() error {
		res, _, err := r.c.LoadBalancer.Create(r.ctx, hcloud.LoadBalancerCreateOpts{
			Name: "check-lb", LoadBalancerType: &hcloud.LoadBalancerType{Name: "lb11"},
			Location: &hcloud.Location{Name: "fsn1"}, Labels: map[string]string{"app": "check"},
		})
		if err != nil {
			return err
		}
		if err := r.wait(res.Action); err != nil {
			return err
		}
		lb := res.LoadBalancer
		steps := []func() (*hcloud.Action, *hcloud.Response, error){
			func() (*hcloud.Action, *hcloud.Response, error) {
				return r.c.LoadBalancer.AddServerTarget(r.ctx, lb, hcloud.LoadBalancerAddServerTargetOpts{Server: st.servers[1]})
			},
			func() (*hcloud.Action, *hcloud.Response, error) {
				return r.c.LoadBalancer.AddLabelSelectorTarget(r.ctx, lb, hcloud.LoadBalancerAddLabelSelectorTargetOpts{Selector: "app=check"})
			},
			func() (*hcloud.Action, *hcloud.Response, error) {
				return r.c.LoadBalancer.AddIPTarget(r.ctx, lb, hcloud.LoadBalancerAddIPTargetOpts{IP: net.ParseIP("203.0.113.7")})
			},
			func() (*hcloud.Action, *hcloud.Response, error) {
				return r.c.LoadBalancer.AddService(r.ctx, lb, hcloud.LoadBalancerAddServiceOpts{
					Protocol: hcloud.LoadBalancerServiceProtocolTCP, ListenPort: hcloud.Ptr(80), DestinationPort: hcloud.Ptr(8080),
				})
			},
			func() (*hcloud.Action, *hcloud.Response, error) {
				return r.c.LoadBalancer.ChangeType(r.ctx, lb, hcloud.LoadBalancerChangeTypeOpts{LoadBalancerType: &hcloud.LoadBalancerType{ID: 2}})
			},
			func() (*hcloud.Action, *hcloud.Response, error) {
				return r.c.LoadBalancer.ChangeProtection(r.ctx, lb, hcloud.LoadBalancerChangeProtectionOpts{Delete: hcloud.Ptr(true)})
			},
			func() (*hcloud.Action, *hcloud.Response, error) {
				return r.c.LoadBalancer.ChangeDNSPtr(r.ctx, lb, lb.PublicNet.IPv4.IP.String(), hcloud.Ptr("lb.example.com"))
			},
		}
		for i, step := range steps {
			a, _, err := step()
			if err != nil {
				return fmt.Errorf("step %d: %w", i, err)
			}
			if err := r.wait(a); err != nil {
				return fmt.Errorf("step %d: %w", i, err)
			}
		}
		got, _, err := r.c.LoadBalancer.GetByID(r.ctx, lb.ID)
		if err != nil {
			return err
		}
		if err := expect(len(got.Targets) == 3 && len(got.Services) == 1 && got.LoadBalancerType.ID == 2 && got.Protection.Delete &&
			got.PublicNet.IPv4.DNSPtr == "lb.example.com",
			"after steps: %d targets, %d services, type %d, rDNS %q", len(got.Targets), len(got.Services), got.LoadBalancerType.ID,
			got.PublicNet.IPv4.DNSPtr); err != nil {
			return err
		}
		_, err = r.c.LoadBalancer.Delete(r.ctx, got)
		if err := expect(hcloud.IsError(err, hcloud.ErrorCodeProtected), "protected delete: %v", err); err != nil {
			return err
		}
		a, _, err := r.c.LoadBalancer.ChangeProtection(r.ctx, got, hcloud.LoadBalancerChangeProtectionOpts{Delete: hcloud.Ptr(false)})
		if err != nil {
			return err
		}
		if err := r.wait(a); err != nil {
			return err
		}
		_, err = r.c.LoadBalancer.Delete(r.ctx, got)
		return err
	})
	r.check("servers: delete removes the server from load balancer targets", func() error {
		res, _, err := r.c.LoadBalancer.Create(r.ctx, hcloud.LoadBalancerCreateOpts{
			Name: "check-lb-2", LoadBalancerType: &hcloud.LoadBalancerType{Name: "lb11"}, Location: &hcloud.Location{Name: "fsn1"},
			Targets: []hcloud.LoadBalancerCreateOptsTarget{{Type: hcloud.LoadBalancerTargetTypeServer,
				Server: hcloud.LoadBalancerCreateOptsTargetServer{Server: st.servers[0]}}},
		})
		if err != nil {
			return err
		}
		if err := r.wait(res.Action); err != nil {
			return err
		}
		del, _, err := r.c.Server.DeleteWithResult(r.ctx, st.servers[0])
		if err != nil {
			return err
		}
		if err := r.wait(del.Action); err != nil {
			return err
		}
		got, _, err := r.c.LoadBalancer.GetByID(r.ctx, res.LoadBalancer.ID)
		if err != nil {
			return err
		}
		return expect(len(got.Targets) == 0, "targets after the server's deletion: %d", len(got.Targets))
	})
}

// selfSigned makes a certificate for domains and its key, as PEM.
func selfSigned(domains ...string) (string, string, *x509.Certificate) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: domains[0]},
		DNSNames: domains, NotBefore: time.Now().Add(-time.Hour).Truncate(time.Second),
		NotAfter: time.Now().Add(90 * 24 * time.Hour).Truncate(time.Second),
	}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	keyDer, _ := x509.MarshalPKCS8PrivateKey(key)
	cert, _ := x509.ParseCertificate(der)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDer})), cert
}

func checkCertificates(r *run, st *state) {
	r.check("certificates: uploaded (the PEM's own domains, fingerprint, validity), managed, in use", func() error {
		certPEM, keyPEM, parsed := selfSigned("shop.example.com", "www.example.com")
		cert, _, err := r.c.Certificate.Create(r.ctx, hcloud.CertificateCreateOpts{
			Name: "check-cert", Type: hcloud.CertificateTypeUploaded, Certificate: certPEM, PrivateKey: keyPEM,
		})
		if err != nil {
			return err
		}
		sum := sha256.Sum256(parsed.Raw)
		fp := []string{}
		for _, b := range sum {
			fp = append(fp, fmt.Sprintf("%02x", b))
		}
		if err := expect(strings.Join(cert.DomainNames, ",") == "shop.example.com,www.example.com" &&
			cert.Fingerprint == strings.Join(fp, ":") && cert.NotValidAfter.Equal(parsed.NotAfter),
			"uploaded: %v %s %v", cert.DomainNames, cert.Fingerprint, cert.NotValidAfter); err != nil {
			return err
		}
		managed, _, err := r.c.Certificate.CreateCertificate(r.ctx, hcloud.CertificateCreateOpts{
			Name: "check-managed", Type: hcloud.CertificateTypeManaged, DomainNames: []string{"api.example.com"},
		})
		if err != nil {
			return err
		}
		if err := r.wait(managed.Action); err != nil {
			return err
		}
		got, _, err := r.c.Certificate.GetByID(r.ctx, managed.Certificate.ID)
		if err != nil {
			return err
		}
		if err := expect(got.Status != nil && got.Status.Issuance == hcloud.CertificateStatusTypeCompleted,
			"managed status: %+v", got.Status); err != nil {
			return err
		}
		res, _, err := r.c.LoadBalancer.Create(r.ctx, hcloud.LoadBalancerCreateOpts{
			Name: "check-lb-https", LoadBalancerType: &hcloud.LoadBalancerType{Name: "lb11"}, Location: &hcloud.Location{Name: "fsn1"},
		})
		if err != nil {
			return err
		}
		if err := r.wait(res.Action); err != nil {
			return err
		}
		a, _, err := r.c.LoadBalancer.AddService(r.ctx, res.LoadBalancer, hcloud.LoadBalancerAddServiceOpts{
			Protocol: hcloud.LoadBalancerServiceProtocolHTTPS, ListenPort: hcloud.Ptr(443), DestinationPort: hcloud.Ptr(80),
			HTTP: &hcloud.LoadBalancerAddServiceOptsHTTP{Certificates: []*hcloud.Certificate{cert}},
		})
		if err != nil {
			return err
		}
		if err := r.wait(a); err != nil {
			return err
		}
		inUse, _, err := r.c.Certificate.GetByID(r.ctx, cert.ID)
		if err != nil {
			return err
		}
		if err := expect(len(inUse.UsedBy) == 1 && inUse.UsedBy[0].ID == res.LoadBalancer.ID, "used by: %+v", inUse.UsedBy); err != nil {
			return err
		}
		if _, err := r.c.Certificate.Delete(r.ctx, cert); err == nil {
			return fmt.Errorf("a certificate in use was deleted")
		}
		a, _, err = r.c.LoadBalancer.DeleteService(r.ctx, res.LoadBalancer, 443)
		if err != nil {
			return err
		}
		if err := r.wait(a); err != nil {
			return err
		}
		_, err = r.c.Certificate.Delete(r.ctx, cert)
		return err
	})
}

func checkOtherResources(r *run) {
	r.check("firewalls, volumes, floating IPs, placement groups: create, list, get, delete", func() error {
		fw, _, err := r.c.Firewall.Create(r.ctx, hcloud.FirewallCreateOpts{Name: "check-fw", Rules: []hcloud.FirewallRule{{
			Direction: hcloud.FirewallRuleDirectionIn, Protocol: hcloud.FirewallRuleProtocolTCP, Port: hcloud.Ptr("22"),
			SourceIPs: []net.IPNet{*cidr("0.0.0.0/0")},
		}}})
		if err != nil {
			return err
		}
		vol, _, err := r.c.Volume.Create(r.ctx, hcloud.VolumeCreateOpts{
			Name: "check-vol", Size: 10, Location: &hcloud.Location{Name: "fsn1"}, Format: hcloud.Ptr("ext4"),
		})
		if err != nil {
			return err
		}
		if err := r.wait(vol.Action); err != nil {
			return err
		}
		fip, _, err := r.c.FloatingIP.Create(r.ctx, hcloud.FloatingIPCreateOpts{
			Type: hcloud.FloatingIPTypeIPv4, HomeLocation: &hcloud.Location{Name: "fsn1"}, Name: hcloud.Ptr("check-fip"),
		})
		if err != nil {
			return err
		}
		pg, _, err := r.c.PlacementGroup.Create(r.ctx, hcloud.PlacementGroupCreateOpts{Name: "check-pg", Type: hcloud.PlacementGroupTypeSpread})
		if err != nil {
			return err
		}
		fws, err := r.c.Firewall.All(r.ctx)
		if err != nil {
			return err
		}
		vols, err := r.c.Volume.All(r.ctx)
		if err != nil {
			return err
		}
		fips, err := r.c.FloatingIP.All(r.ctx)
		if err != nil {
			return err
		}
		pgs, err := r.c.PlacementGroup.All(r.ctx)
		if err != nil {
			return err
		}
		if err := expect(len(fws) == 1 && len(fws[0].Rules) == 1 && len(vols) == 1 && vols[0].Size == 10 &&
			len(fips) == 1 && fips[0].IP != nil && len(pgs) == 1,
			"lists: %d firewalls, %d volumes, %d floating IPs, %d placement groups", len(fws), len(vols), len(fips), len(pgs)); err != nil {
			return err
		}
		got, _, err := r.c.Volume.GetByID(r.ctx, vol.Volume.ID)
		if err != nil || got == nil || got.LinuxDevice == "" {
			return fmt.Errorf("volume by ID: %v %v", got, err)
		}
		for _, del := range []func() (*hcloud.Response, error){
			func() (*hcloud.Response, error) { return r.c.Firewall.Delete(r.ctx, fw.Firewall) },
			func() (*hcloud.Response, error) { return r.c.Volume.Delete(r.ctx, vol.Volume) },
			func() (*hcloud.Response, error) { return r.c.FloatingIP.Delete(r.ctx, fip.FloatingIP) },
			func() (*hcloud.Response, error) { return r.c.PlacementGroup.Delete(r.ctx, pg.PlacementGroup) },
		} {
			if _, err := del(); err != nil {
				return err
			}
		}
		left, err := r.c.Volume.All(r.ctx)
		return expect(err == nil && len(left) == 0, "volumes after delete: %d %v", len(left), err)
	})
}

func checkLoadBalancerActions(r *run) {
	r.check("load balancers: network attach and detach, algorithm, service update, public interface, removing targets", func() error {
		n, _, err := r.c.Network.Create(r.ctx, hcloud.NetworkCreateOpts{
			Name: "check-lb-net", IPRange: cidr("10.0.0.0/8"),
			Subnets: []hcloud.NetworkSubnet{{Type: hcloud.NetworkSubnetTypeCloud, IPRange: cidr("10.0.0.0/24"),
				NetworkZone: hcloud.NetworkZoneEUCentral}},
		})
		if err != nil {
			return err
		}
		res, _, err := r.c.LoadBalancer.Create(r.ctx, hcloud.LoadBalancerCreateOpts{
			Name: "check-lb-actions", LoadBalancerType: &hcloud.LoadBalancerType{Name: "lb11"}, Location: &hcloud.Location{Name: "fsn1"},
			Services: []hcloud.LoadBalancerCreateOptsService{{Protocol: hcloud.LoadBalancerServiceProtocolTCP,
				ListenPort: hcloud.Ptr(80), DestinationPort: hcloud.Ptr(8080)}},
		})
		if err != nil {
			return err
		}
		if err := r.wait(res.Action); err != nil {
			return err
		}
		lb := res.LoadBalancer
		steps := []func() (*hcloud.Action, *hcloud.Response, error){
			func() (*hcloud.Action, *hcloud.Response, error) {
				return r.c.LoadBalancer.AttachToNetwork(r.ctx, lb, hcloud.LoadBalancerAttachToNetworkOpts{Network: n})
			},
			func() (*hcloud.Action, *hcloud.Response, error) {
				return r.c.LoadBalancer.ChangeAlgorithm(r.ctx, lb, hcloud.LoadBalancerChangeAlgorithmOpts{Type: hcloud.LoadBalancerAlgorithmTypeLeastConnections})
			},
			func() (*hcloud.Action, *hcloud.Response, error) {
				return r.c.LoadBalancer.UpdateService(r.ctx, lb, 80, hcloud.LoadBalancerUpdateServiceOpts{DestinationPort: hcloud.Ptr(9090)})
			},
			func() (*hcloud.Action, *hcloud.Response, error) {
				return r.c.LoadBalancer.DisablePublicInterface(r.ctx, lb)
			},
			func() (*hcloud.Action, *hcloud.Response, error) {
				return r.c.LoadBalancer.EnablePublicInterface(r.ctx, lb)
			},
			func() (*hcloud.Action, *hcloud.Response, error) {
				return r.c.LoadBalancer.AddIPTarget(r.ctx, lb, hcloud.LoadBalancerAddIPTargetOpts{IP: net.ParseIP("203.0.113.9")})
			},
			func() (*hcloud.Action, *hcloud.Response, error) {
				return r.c.LoadBalancer.RemoveIPTarget(r.ctx, lb, net.ParseIP("203.0.113.9"))
			},
			func() (*hcloud.Action, *hcloud.Response, error) {
				return r.c.LoadBalancer.AddLabelSelectorTarget(r.ctx, lb, hcloud.LoadBalancerAddLabelSelectorTargetOpts{Selector: "app=check"})
			},
			func() (*hcloud.Action, *hcloud.Response, error) {
				return r.c.LoadBalancer.RemoveLabelSelectorTarget(r.ctx, lb, "app=check")
			},
			func() (*hcloud.Action, *hcloud.Response, error) {
				return r.c.LoadBalancer.DetachFromNetwork(r.ctx, lb, hcloud.LoadBalancerDetachFromNetworkOpts{Network: n})
			},
		}
		for i, step := range steps {
			a, _, err := step()
			if err != nil {
				return fmt.Errorf("step %d: %w", i, err)
			}
			if err := r.wait(a); err != nil {
				return fmt.Errorf("step %d: %w", i, err)
			}
		}
		got, _, err := r.c.LoadBalancer.GetByID(r.ctx, lb.ID)
		if err != nil {
			return err
		}
		if err := expect(got.Algorithm.Type == hcloud.LoadBalancerAlgorithmTypeLeastConnections && got.Services[0].DestinationPort == 9090 &&
			got.PublicNet.Enabled && len(got.PrivateNet) == 0 && len(got.Targets) == 0,
			"after steps: %s, port %d, public %v, %d networks, %d targets", got.Algorithm.Type, got.Services[0].DestinationPort,
			got.PublicNet.Enabled, len(got.PrivateNet), len(got.Targets)); err != nil {
			return err
		}
		if _, err := r.c.LoadBalancer.Delete(r.ctx, got); err != nil {
			return err
		}
		_, err = r.c.Network.Delete(r.ctx, n)
		return err
	})
}

func checkFirewalls(r *run) {
	r.check("firewalls: applied to a server and a label selector, rules replaced, removed, documented errors", func() error {
		made, _, err := r.c.Server.Create(r.ctx, hcloud.ServerCreateOpts{
			Name: "check-fw-server", ServerType: &hcloud.ServerType{Name: "cx23"}, Image: &hcloud.Image{Name: "ubuntu-24.04"},
			Location: &hcloud.Location{Name: "fsn1"}, Labels: map[string]string{"check": "fw"},
		})
		if err != nil {
			return err
		}
		if err := r.wait(append([]*hcloud.Action{made.Action}, made.NextActions...)...); err != nil {
			return err
		}
		onServer := hcloud.FirewallResource{
			Type: hcloud.FirewallResourceTypeServer, Server: &hcloud.FirewallResourceServer{ID: made.Server.ID},
		}
		bySelector := hcloud.FirewallResource{
			Type: hcloud.FirewallResourceTypeLabelSelector, LabelSelector: &hcloud.FirewallResourceLabelSelector{Selector: "check=fw"},
		}
		created, _, err := r.c.Firewall.Create(r.ctx, hcloud.FirewallCreateOpts{
			Name: "check-fw-applied", ApplyTo: []hcloud.FirewallResource{onServer},
		})
		if err != nil {
			return err
		}
		if err := r.wait(created.Actions...); err != nil {
			return err
		}
		srv, _, err := r.c.Server.GetByID(r.ctx, made.Server.ID)
		if err != nil {
			return err
		}
		if err := expect(len(srv.PublicNet.Firewalls) == 1 && srv.PublicNet.Firewalls[0].Firewall.ID == created.Firewall.ID &&
			srv.PublicNet.Firewalls[0].Status == hcloud.FirewallStatusApplied, "server firewalls: %+v", srv.PublicNet.Firewalls); err != nil {
			return err
		}
		actions, _, err := r.c.Firewall.SetRules(r.ctx, created.Firewall, hcloud.FirewallSetRulesOpts{Rules: []hcloud.FirewallRule{{
			Direction: hcloud.FirewallRuleDirectionIn, Protocol: hcloud.FirewallRuleProtocolTCP, Port: hcloud.Ptr("30000-32767"),
			SourceIPs: []net.IPNet{*cidr("203.0.113.0/24")},
		}}})
		if err != nil {
			return err
		}
		if err := r.wait(actions...); err != nil {
			return err
		}
		_, _, err = r.c.Firewall.ApplyResources(r.ctx, created.Firewall, []hcloud.FirewallResource{onServer})
		if err := expect(hcloud.IsError(err, hcloud.ErrorCodeFirewallAlreadyApplied), "applied twice: %v", err); err != nil {
			return err
		}
		actions, _, err = r.c.Firewall.ApplyResources(r.ctx, created.Firewall, []hcloud.FirewallResource{bySelector})
		if err != nil {
			return err
		}
		if err := r.wait(actions...); err != nil {
			return err
		}
		got, _, err := r.c.Firewall.GetByID(r.ctx, created.Firewall.ID)
		if err != nil {
			return err
		}
		if err := expect(len(got.AppliedTo) == 2 && len(got.Rules) == 1 && got.Rules[0].Port != nil &&
			*got.Rules[0].Port == "30000-32767", "firewall: %+v", got); err != nil {
			return err
		}
		_, err = r.c.Firewall.Delete(r.ctx, got)
		if err := expect(hcloud.IsError(err, hcloud.ErrorCodeResourceInUse), "deleted while applied: %v", err); err != nil {
			return err
		}
		actions, _, err = r.c.Firewall.RemoveResources(r.ctx, got, []hcloud.FirewallResource{onServer, bySelector})
		if err != nil {
			return err
		}
		if err := r.wait(actions...); err != nil {
			return err
		}
		if _, err = r.c.Firewall.Delete(r.ctx, got); err != nil {
			return err
		}
		_, _, err = r.c.Server.DeleteWithResult(r.ctx, made.Server)
		return err
	})
}
