import { describe, expect, it } from 'vitest';
import { newGroupRulesAuthorizer, type RequestAttributes, type UserInfo } from '../authz.js';
import { impersonate, impersonationRequests } from './impersonation.js';

const masters: UserInfo = { name: 'admin', groups: ['system:masters', 'system:authenticated'] };
const nobody: UserInfo = { name: 'nobody', groups: ['system:authenticated'] };
/** `impersonator` may impersonate user bob, group devs and the extra scopes=view only. */
const policy = newGroupRulesAuthorizer([
  {
    group: 'system:masters',
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
    nonResourceRules: [],
  },
  {
    user: 'impersonator',
    resourceRules: [
      { verbs: ['impersonate'], apiGroups: [''], resources: ['users'], resourceNames: ['bob'] },
      { verbs: ['impersonate'], apiGroups: [''], resources: ['groups'], resourceNames: ['devs'] },
      {
        verbs: ['impersonate'],
        apiGroups: ['authentication.k8s.io'],
        resources: ['userextras/scopes'],
        resourceNames: ['view'],
      },
    ],
    nonResourceRules: [],
  },
]);
const impersonator: UserInfo = { name: 'impersonator', groups: ['system:authenticated'] };
const h = (o: Record<string, string[]>) => o;

describe('impersonation', () => {
  it.each([
    { name: 'no headers: the requester', headers: {}, want: masters },
    {
      name: 'a user gets system:authenticated',
      headers: h({ 'impersonate-user': ['bob'] }),
      want: { name: 'bob', groups: ['system:authenticated'] },
    },
    {
      name: 'groups given are kept, system:authenticated added',
      headers: h({ 'impersonate-user': ['bob'], 'impersonate-group': ['devs', 'ops'] }),
      want: { name: 'bob', groups: ['devs', 'ops', 'system:authenticated'] },
    },
    {
      name: 'system:unauthenticated asked: no system:authenticated',
      headers: h({ 'impersonate-user': ['bob'], 'impersonate-group': ['system:unauthenticated'] }),
      want: { name: 'bob', groups: ['system:unauthenticated'] },
    },
    {
      name: 'a service account gets its fixed groups',
      headers: h({ 'impersonate-user': ['system:serviceaccount:ns1:sa1'] }),
      want: {
        name: 'system:serviceaccount:ns1:sa1',
        groups: ['system:serviceaccounts', 'system:serviceaccounts:ns1', 'system:authenticated'],
      },
    },
    {
      name: 'a service account with groups given gets only those',
      headers: h({ 'impersonate-user': ['system:serviceaccount:ns1:sa1'], 'impersonate-group': ['g'] }),
      want: { name: 'system:serviceaccount:ns1:sa1', groups: ['g', 'system:authenticated'] },
    },
    {
      name: 'anonymous gets system:unauthenticated',
      headers: h({ 'impersonate-user': ['system:anonymous'] }),
      want: { name: 'system:anonymous', groups: ['system:unauthenticated'] },
    },
    {
      name: 'uid and extras (keys lower-cased, percent-decoded)',
      headers: h({
        'impersonate-user': ['bob'],
        'impersonate-uid': ['u-7'],
        'impersonate-extra-scopes': ['view', 'edit'],
        'impersonate-extra-example.com%2fteam': ['a'],
      }),
      want: {
        name: 'bob',
        uid: 'u-7',
        groups: ['system:authenticated'],
        extra: { scopes: ['view', 'edit'], 'example.com/team': ['a'] },
      },
    },
  ])('$name', ({ headers, want }) => {
    expect(impersonate(headers, masters, policy)).toEqual(want);
  });

  it('refuses groups, extras or a uid without a user', () => {
    for (const headers of [
      { 'impersonate-group': ['g'] },
      { 'impersonate-uid': ['u'] },
      { 'impersonate-extra-a': ['b'] },
    ])
      expect(() => impersonationRequests(headers)).toThrow(/without impersonating a user/);
  });

  it.each([
    {
      name: 'a user without the verb',
      who: nobody,
      headers: h({ 'impersonate-user': ['bob'] }),
      message:
        'users "bob" is forbidden: User "nobody" cannot impersonate resource "users" in API group "" at the cluster scope',
    },
    {
      name: 'a service account is checked in its namespace',
      who: nobody,
      headers: h({ 'impersonate-user': ['system:serviceaccount:ns1:sa1'] }),
      message:
        'serviceaccounts "sa1" is forbidden: User "nobody" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "ns1"',
    },
    {
      name: 'each group is checked',
      who: impersonator,
      headers: h({ 'impersonate-user': ['bob'], 'impersonate-group': ['devs', 'admins'] }),
      message:
        'groups "admins" is forbidden: User "impersonator" cannot impersonate resource "groups" in API group "" at the cluster scope',
    },
    {
      name: 'each extra value is checked',
      who: impersonator,
      headers: h({ 'impersonate-user': ['bob'], 'impersonate-extra-scopes': ['view', 'all'] }),
      message:
        'userextras.authentication.k8s.io "all" is forbidden: User "impersonator" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope',
    },
  ])('refuses $name with 403', ({ who, headers, message }) => {
    expect(() => impersonate(headers, who, policy)).toThrow(message);
  });

  it('lets a user impersonate only what it is granted', () => {
    const u = impersonate(
      { 'impersonate-user': ['bob'], 'impersonate-group': ['devs'], 'impersonate-extra-scopes': ['view'] },
      impersonator,
      policy,
    );
    expect(u).toEqual({ name: 'bob', groups: ['devs', 'system:authenticated'], extra: { scopes: ['view'] } });
    const seen: RequestAttributes[] = [];
    impersonate({ 'impersonate-user': ['bob'] }, impersonator, {
      authorize: (a) => (seen.push(a), { allowed: true, reason: '' }),
      rulesFor: () => ({ resourceRules: [], nonResourceRules: [], incomplete: false }),
    });
    expect(seen).toEqual([
      { kind: 'resource', user: impersonator, verb: 'impersonate', group: '', resource: 'users', name: 'bob' },
    ]);
  });
});
