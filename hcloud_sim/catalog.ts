/**
 * The fixed catalog the simulator serves: locations, datacenters, server types and load balancer
 * types, with Hetzner's names and limits.
 *
 * @module
 */
import type { components } from "../hcloud_api/mod.ts";

type S = components["schemas"];

const price = (net: string, gross: string) => ({
  location: "fsn1",
  price_hourly: { net, gross },
  price_monthly: { net: (Number(net) * 720).toFixed(4), gross: (Number(gross) * 720).toFixed(4) },
  included_traffic: 21990232555520,
  price_per_tb_traffic: { net: "1.0000", gross: "1.1900" },
});

/** Locations with their network zones. */
export const LOCATIONS: S["location"][] = [
  {
    id: 1,
    name: "fsn1",
    description: "Falkenstein DC Park 1",
    country: "DE",
    city: "Falkenstein",
    latitude: 50.47612,
    longitude: 12.370071,
    network_zone: "eu-central",
  },
  {
    id: 2,
    name: "nbg1",
    description: "Nuremberg DC Park 1",
    country: "DE",
    city: "Nuremberg",
    latitude: 49.452102,
    longitude: 11.076665,
    network_zone: "eu-central",
  },
  {
    id: 3,
    name: "hel1",
    description: "Helsinki DC Park 1",
    country: "FI",
    city: "Helsinki",
    latitude: 60.169855,
    longitude: 24.938379,
    network_zone: "eu-central",
  },
  {
    id: 4,
    name: "ash",
    description: "Ashburn, VA",
    country: "US",
    city: "Ashburn, VA",
    latitude: 39.045821,
    longitude: -77.487073,
    network_zone: "us-east",
  },
  {
    id: 5,
    name: "hil",
    description: "Hillsboro, OR",
    country: "US",
    city: "Hillsboro, OR",
    latitude: 45.54222,
    longitude: -122.951924,
    network_zone: "us-west",
  },
  {
    id: 6,
    name: "sin",
    description: "Singapore",
    country: "SG",
    city: "Singapore",
    latitude: 1.283333,
    longitude: 103.833333,
    network_zone: "ap-southeast",
  },
];

const DC_SUFFIX: Record<string, string> = {
  fsn1: "dc14",
  nbg1: "dc3",
  hel1: "dc2",
  ash: "dc1",
  hil: "dc1",
  sin: "dc1",
};

/** Server types (a representative subset). */
// IDs stay stable as types are added; the cx*2/cpx*1 generation is deprecated (successors: cx*3, cpx*2).
const DEPRECATED_TYPES = new Set(["cx22", "cx32", "cpx21", "cpx31"]);
const DEPRECATION = { announced: "2025-10-16T06:00:00Z", unavailable_after: "2026-01-01T00:00:00Z" };

export const SERVER_TYPES: S["server_type"][] = [
  ["cx22", 2, 4, 40, "shared", "x86"],
  ["cx32", 4, 8, 80, "shared", "x86"],
  ["cpx21", 3, 4, 80, "shared", "x86"],
  ["cpx31", 4, 8, 160, "shared", "x86"],
  ["cax11", 2, 4, 40, "shared", "arm"],
  ["ccx13", 2, 8, 80, "dedicated", "x86"],
  ["cx23", 2, 4, 40, "shared", "x86"],
  ["cx33", 4, 8, 80, "shared", "x86"],
  ["cpx22", 2, 4, 80, "shared", "x86"],
  ["cpx32", 4, 8, 160, "shared", "x86"],
].map(([name, cores, memory, disk, cpu, arch], i) => ({
  id: 100 + i,
  name: name as string,
  description: (name as string).toUpperCase(),
  cores: cores as number,
  memory: memory as number,
  disk: disk as number,
  cpu_type: cpu as "shared" | "dedicated",
  architecture: arch as "x86" | "arm",
  storage_type: "local" as const,
  category: "regular_purpose",
  deprecated: DEPRECATED_TYPES.has(name as string),
  deprecation: DEPRECATED_TYPES.has(name as string) ? DEPRECATION : null,
  prices: [price("0.0060", "0.0071")],
  locations: LOCATIONS.map((l) => ({
    id: l.id,
    name: l.name,
    deprecation: DEPRECATED_TYPES.has(name as string) ? DEPRECATION : null,
  })),
}));

/** Datacenters (deprecated by Hetzner but still served). */
export const DATACENTERS: S["data_center"][] = LOCATIONS.map((location, i) => ({
  id: 10 + i,
  name: `${location.name}-${DC_SUFFIX[location.name]}`,
  description: `${location.city} ${DC_SUFFIX[location.name]}`,
  location,
  server_types: {
    supported: SERVER_TYPES.map((t) => t.id),
    available: SERVER_TYPES.map((t) => t.id),
    available_for_migration: SERVER_TYPES.map((t) => t.id),
  },
}));

/** Load balancer types with their limits. */
export const LOAD_BALANCER_TYPES: S["load_balancer_type"][] = [
  ["lb11", 5, 25, 10, 10000],
  ["lb21", 15, 75, 25, 20000],
  ["lb31", 30, 150, 50, 40000],
].map(([name, services, targets, certs, conns], i) => ({
  id: 1 + i,
  name: name as string,
  description: `LB${(name as string).slice(2)}`,
  max_services: services as number,
  max_targets: targets as number,
  max_assigned_certificates: certs as number,
  max_connections: conns as number,
  deprecated: null,
  prices: [price("0.0080", "0.0095")],
}));

/** The datacenter of a location. */
export function datacenterOf(locationName: string): S["data_center"] {
  return DATACENTERS.find((d) => d.location.name === locationName)!;
}
