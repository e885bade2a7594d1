// The address rule of panto.fetch: public unicast only, unless the host allows hosts or ranges.
import { describe, expect, it } from 'vitest';
import { AddressRules, isPublicAddress, parseAddress } from '../../src/lua/address-rules.js';

describe('isPublicAddress', () => {
  it('refuses loopback, private, link-local, CGNAT, metadata, reserved, multicast and the IPv4-embedding IPv6 blocks', () => {
    for (const ip of [
      '127.0.0.1',
      '127.255.0.9',
      '0.0.0.0',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '100.100.100.200',
      '192.0.2.5',
      '198.18.0.1',
      '224.0.0.1',
      '255.255.255.255',
      '::',
      '::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:8.8.8.8',
      '64:ff9b::8.8.8.8',
      '2002:7f00:1::',
      '2001::1',
      '2001:db8::1',
      'fc00::1',
      'fd00:ec2::254',
      'fe80::1',
      'fe80::1%eth0',
      'ff02::1',
      '[::1]',
      'not an ip',
      '2130706433',
    ]) {
      expect([ip, isPublicAddress(ip)]).toEqual([ip, false]);
    }
  });

  it('allows public unicast addresses', () => {
    for (const ip of [
      '8.8.8.8',
      '1.1.1.1',
      '172.32.0.1',
      '100.128.0.1',
      '2606:4700:4700::1111',
      '2a00:1450::1',
    ]) {
      expect([ip, isPublicAddress(ip)]).toEqual([ip, true]);
    }
  });

  it('parses IPv6 with an IPv4 tail and compressed zeros', () => {
    expect(parseAddress('::ffff:1.2.3.4')).toEqual(parseAddress('::ffff:102:304'));
    expect(parseAddress('1::')?.value).toBe(1n << 112n);
    expect(parseAddress('1:2:3:4:5:6:7:8')).not.toBeNull();
  });
});

describe('AddressRules', () => {
  it('lets listed hosts and ranges through, and limits hosts with allowHosts', () => {
    const rules = new AddressRules({
      privateHosts: ['localhost', '*.corp.example'],
      privateRanges: ['10.0.0.0/8', 'fd00::/8'],
      allowHosts: ['example.com', '*.corp.example', 'localhost'],
    });
    expect(rules.addressProblem('localhost', '127.0.0.1')).toBeNull();
    expect(rules.addressProblem('wiki.corp.example', '192.168.1.1')).toBeNull();
    expect(rules.addressProblem('example.com', '10.9.9.9')).toBeNull();
    expect(rules.addressProblem('example.com', 'fd12::1')).toBeNull();
    expect(rules.addressProblem('example.com', '192.168.1.1')).toMatch(/a loopback, private/);
    expect(rules.hostProblem('EXAMPLE.com.')).toBeNull();
    expect(rules.hostProblem('a.b.corp.example')).toBeNull();
    expect(rules.hostProblem('corp.example')).toMatch(/not on the host's list/);
    expect(rules.hostProblem('evil.com')).toMatch(/not on the host's list/);
    expect(() => new AddressRules({ privateRanges: ['10.0.0.0/40'] })).toThrow(/not an IP address or CIDR/);
  });
});
