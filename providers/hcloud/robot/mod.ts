/**
 * The Robot room: the Robot webservice client, its configuration, and one cached server list.
 *
 * @module
 */
export { RobotClient, type RobotServerInfo } from "./client.ts";
export { readRobotConfig, type RobotConfig } from "./config.ts";
export { RobotServers, type RobotSnapshot } from "./servers.ts";
