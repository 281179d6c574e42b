/**
 * The string formats kube-openapi's validator checks for custom resources (the others are
 * accepted as they are). Returns the format name when `value` does not match it.
 */
import { isIP, isIPv4, isIPv6 } from 'node:net';

const UUID = /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const HOSTNAME =
  /^(?=.{1,253}$)[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)*$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h|d|w))+$/;
const MAC = /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$/;
const EMAIL = /^[^@\s]+@[^@\s]+$/;

function isCidr(v: string): boolean {
  const [ip, bits, ...rest] = v.split('/');
  if (rest.length || ip === undefined || bits === undefined || !/^\d+$/.test(bits)) return false;
  const max = isIPv4(ip) ? 32 : isIPv6(ip) ? 128 : -1;
  return Number(bits) <= max;
}

const CHECKS: Readonly<Record<string, (v: string) => boolean>> = {
  uuid: (v) => UUID.test(v),
  date: (v) => DATE.test(v),
  'date-time': (v) => DATE_TIME.test(v),
  hostname: (v) => HOSTNAME.test(v),
  ipv4: (v) => isIPv4(v),
  ipv6: (v) => isIPv6(v),
  ip: (v) => isIP(v) !== 0,
  cidr: isCidr,
  byte: (v) => BASE64.test(v),
  duration: (v) => DURATION.test(v),
  mac: (v) => MAC.test(v),
  email: (v) => EMAIL.test(v),
};

export function checkFormat(format: string, value: string): string | undefined {
  const check = CHECKS[format];
  return check && !check(value) ? format : undefined;
}
