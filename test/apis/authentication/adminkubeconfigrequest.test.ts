import { describe, expect, it } from 'vitest';
import { validateAdminKubeconfigRequest } from '../../../src/apis/authentication/v1alpha1/adminkubeconfigrequest.js';

const request = (spec: unknown) => ({
  apiVersion: 'authentication.gardener.cloud/v1alpha1',
  kind: 'AdminKubeconfigRequest',
  spec,
});

describe('AdminKubeconfigRequest validation', () => {
  it('defaults the expiration to one hour and takes 10 minutes to 24 hours', () => {
    expect(validateAdminKubeconfigRequest(undefined)).toEqual({ expirationSeconds: 3600, errors: [] });
    expect(validateAdminKubeconfigRequest(request({}))).toEqual({ expirationSeconds: 3600, errors: [] });
    expect(validateAdminKubeconfigRequest(request({ expirationSeconds: 600 })).expirationSeconds).toBe(600);
    expect(validateAdminKubeconfigRequest(request({ expirationSeconds: 86_400 })).expirationSeconds).toBe(86_400);
  });

  it('refuses expirations out of bounds, other kinds and other versions with field errors', () => {
    const field = (body: unknown) => validateAdminKubeconfigRequest(body).errors.map((e) => [e.field, e.detail]);
    expect(field(request({ expirationSeconds: 599 }))).toEqual([
      ['spec.expirationSeconds', 'may not specify a duration less than 10 minutes'],
    ]);
    expect(field(request({ expirationSeconds: 86_401 }))).toEqual([
      ['spec.expirationSeconds', 'may not specify a duration longer than 24 hours'],
    ]);
    expect(field(request({ expirationSeconds: '1h' }))).toEqual([
      ['spec.expirationSeconds', 'must be an integer number of seconds'],
    ]);
    expect(field({ ...request({}), apiVersion: 'core.gardener.cloud/v1beta1', kind: 'Shoot' })).toEqual([
      ['apiVersion', 'must be authentication.gardener.cloud/v1alpha1'],
      ['kind', 'must be AdminKubeconfigRequest'],
    ]);
    expect(field([])).toHaveLength(1);
  });
});
