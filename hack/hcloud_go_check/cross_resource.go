package main

import (
	"fmt"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

// createServers creates n servers with the given labels in fsn1, optionally in a network, and waits.
func createServers(r *run, st *state, prefix string, n int, labels map[string]string, network *hcloud.Network) ([]*hcloud.Server, error) {
	var out []*hcloud.Server
	for i := 0; i < n; i++ {
		opts := hcloud.ServerCreateOpts{
			Name: fmt.Sprintf("%s-%d", prefix, i), Labels: labels, SSHKeys: []*hcloud.SSHKey{st.sshKey},
			Location: &hcloud.Location{Name: "fsn1"}, ServerType: &hcloud.ServerType{Name: "cx23"},
			Image: &hcloud.Image{Name: "ubuntu-24.04"},
		}
		if network != nil {
			opts.Networks = []*hcloud.Network{network}
		}
		res, _, err := r.c.Server.Create(r.ctx, opts)
		if err != nil {
			return nil, err
		}
		if err := r.wait(append([]*hcloud.Action{res.Action}, res.NextActions...)...); err != nil {
			return nil, err
		}
		out = append(out, res.Server)
	}
	return out, nil
}

// checkCrossResource checks the effects one resource has on another, as the API documents them.
func checkCrossResource(r *run, st *state) {
	r.check("cross-resource: a subnet in use is not deleted; a deleted server leaves targets, its route stays", func() error {
		n, _, err := r.c.Network.Create(r.ctx, hcloud.NetworkCreateOpts{
			Name: "cross-net", IPRange: cidr("10.0.0.0/16"),
			Subnets: []hcloud.NetworkSubnet{{Type: hcloud.NetworkSubnetTypeCloud, IPRange: cidr("10.0.1.0/24"),
				NetworkZone: hcloud.NetworkZoneEUCentral}},
		})
		if err != nil {
			return err
		}
		servers, err := createServers(r, st, "cross", 1, map[string]string{"cross": "yes"}, n)
		if err != nil {
			return err
		}
		s, _, err := r.c.Server.GetByID(r.ctx, servers[0].ID)
		if err != nil || len(s.PrivateNet) != 1 {
			return fmt.Errorf("server created in the network: %v %v", s, err)
		}
		_, _, err = r.c.Network.DeleteSubnet(r.ctx, n, hcloud.NetworkDeleteSubnetOpts{Subnet: hcloud.NetworkSubnet{IPRange: cidr("10.0.1.0/24")}})
		if err := expect(hcloud.IsError(err, hcloud.ErrorCodeResourceInUse), "delete_subnet with a server in it: %v", err); err != nil {
			return err
		}
		a, _, err := r.c.Network.AddRoute(r.ctx, n, hcloud.NetworkAddRouteOpts{Route: hcloud.NetworkRoute{
			Destination: cidr("10.0.200.0/24"), Gateway: s.PrivateNet[0].IP,
		}})
		if err != nil {
			return err
		}
		if err := r.wait(a); err != nil {
			return err
		}
		lbRes, _, err := r.c.LoadBalancer.Create(r.ctx, hcloud.LoadBalancerCreateOpts{
			Name: "cross-lb", LoadBalancerType: &hcloud.LoadBalancerType{Name: "lb11"}, Location: &hcloud.Location{Name: "fsn1"},
			Targets: []hcloud.LoadBalancerCreateOptsTarget{{Type: hcloud.LoadBalancerTargetTypeServer,
				Server: hcloud.LoadBalancerCreateOptsTargetServer{Server: s}}},
		})
		if err != nil {
			return err
		}
		if err := r.wait(lbRes.Action); err != nil {
			return err
		}
		if _, _, err := r.c.Server.DeleteWithResult(r.ctx, s); err != nil {
			return err
		}
		lb, _, err := r.c.LoadBalancer.GetByID(r.ctx, lbRes.LoadBalancer.ID)
		if err != nil {
			return err
		}
		if err := expect(len(lb.Targets) == 0, "targets after the server's deletion: %d", len(lb.Targets)); err != nil {
			return err
		}
		got, _, err := r.c.Network.GetByID(r.ctx, n.ID)
		if err != nil {
			return err
		}
		// The route stays (it points at an address no server holds now); deleting it is the owner's job.
		if err := expect(len(got.Routes) == 1 && len(got.Servers) == 0, "routes %d servers %d", len(got.Routes), len(got.Servers)); err != nil {
			return err
		}
		a, _, err = r.c.Network.DeleteSubnet(r.ctx, n, hcloud.NetworkDeleteSubnetOpts{Subnet: hcloud.NetworkSubnet{IPRange: cidr("10.0.1.0/24")}})
		if err != nil {
			return fmt.Errorf("delete_subnet once empty: %w", err)
		}
		if err := r.wait(a); err != nil {
			return err
		}
		if _, err := r.c.LoadBalancer.Delete(r.ctx, lb); err != nil {
			return err
		}
		_, err = r.c.Network.Delete(r.ctx, n)
		return err
	})
	r.check("cross-resource: servers a label selector resolves count against max_targets", func() error {
		lbType, _, err := r.c.LoadBalancerType.GetByName(r.ctx, "lb11")
		if err != nil {
			return err
		}
		bulk, err := createServers(r, st, "bulk", lbType.MaxTargets-1, map[string]string{"bulk": "yes"}, nil)
		if err != nil {
			return err
		}
		extra, err := createServers(r, st, "extra", 2, map[string]string{"extra": "yes"}, nil)
		if err != nil {
			return err
		}
		lbRes, _, err := r.c.LoadBalancer.Create(r.ctx, hcloud.LoadBalancerCreateOpts{
			Name: "limit-lb", LoadBalancerType: lbType, Location: &hcloud.Location{Name: "fsn1"},
		})
		if err != nil {
			return err
		}
		lb := lbRes.LoadBalancer
		if err := r.wait(lbRes.Action); err != nil {
			return err
		}
		a, _, err := r.c.LoadBalancer.AddLabelSelectorTarget(r.ctx, lb, hcloud.LoadBalancerAddLabelSelectorTargetOpts{Selector: "bulk=yes"})
		if err != nil {
			return err
		}
		if err := r.wait(a); err != nil {
			return err
		}
		a, _, err = r.c.LoadBalancer.AddServerTarget(r.ctx, lb, hcloud.LoadBalancerAddServerTargetOpts{Server: extra[0]})
		if err != nil {
			return fmt.Errorf("the last target within the limit: %w", err)
		}
		if err := r.wait(a); err != nil {
			return err
		}
		_, _, err = r.c.LoadBalancer.AddServerTarget(r.ctx, lb, hcloud.LoadBalancerAddServerTargetOpts{Server: extra[1]})
		if err := expect(hcloud.IsError(err, hcloud.ErrorCodeResourceLimitExceeded), "one target over the limit: %v", err); err != nil {
			return err
		}
		// A server labelled later is matched but finds no room: the selector still lists the first ones.
		if _, _, err := r.c.Server.Update(r.ctx, extra[1], hcloud.ServerUpdateOpts{Labels: map[string]string{"bulk": "yes"}}); err != nil {
			return err
		}
		got, _, err := r.c.LoadBalancer.GetByID(r.ctx, lb.ID)
		if err != nil {
			return err
		}
		resolved := 0
		for _, t := range got.Targets {
			if t.Type == hcloud.LoadBalancerTargetTypeLabelSelector {
				resolved += len(t.Targets)
			}
		}
		if err := expect(len(got.Targets) == 2 && resolved == len(bulk), "targets %d, resolved %d", len(got.Targets), resolved); err != nil {
			return err
		}
		// Freeing a place lets the selector resolve the later server.
		a, _, err = r.c.LoadBalancer.RemoveServerTarget(r.ctx, got, extra[0])
		if err != nil {
			return err
		}
		if err := r.wait(a); err != nil {
			return err
		}
		got, _, err = r.c.LoadBalancer.GetByID(r.ctx, lb.ID)
		if err != nil {
			return err
		}
		if err := expect(len(got.Targets) == 1 && len(got.Targets[0].Targets) == len(bulk)+1, "after freeing a place: %d targets", len(got.Targets)); err != nil {
			return err
		}
		if _, err := r.c.LoadBalancer.Delete(r.ctx, got); err != nil {
			return err
		}
		for _, s := range append(bulk, extra...) {
			if _, _, err := r.c.Server.DeleteWithResult(r.ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
}
