/**
 * The bundle's shims for Fedify's key code (shims/pkijs.js, shims/asn1js.js, swapped in by wrangler.toml `[alias]`
 * and vitest.config.ts) answer what the real libraries answer, for the calls Fedify makes.
 */
import assert from "node:assert/strict";
import { webcrypto } from "node:crypto";
import { test } from "node:test";
import * as realAsn1 from "asn1js";
import { PublicKeyInfo as RealPublicKeyInfo } from "pkijs";
import * as shimAsn1 from "../shims/asn1js.js";
import { PublicKeyInfo as ShimPublicKeyInfo } from "../shims/pkijs.js";

const { subtle } = webcrypto;

const keys: [string, () => Promise<CryptoKeyPair | CryptoKey>][] = [
  [
    "RSA",
    () =>
      subtle.generateKey(
        { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
        true,
        ["sign", "verify"],
      ),
  ],
  ["Ed25519", () => subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])],
  ["P-256", () => subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])],
];

for (const [name, make] of keys) {
  test(`the SPKI algorithm of a ${name} key is the real pkijs's`, async () => {
    const pair = (await make()) as CryptoKeyPair;
    const spki = await subtle.exportKey("spki", pair.publicKey);
    const real = RealPublicKeyInfo.fromBER(spki).algorithm.algorithmId;
    assert.equal(ShimPublicKeyInfo.fromBER(spki).algorithm.algorithmId, real);
    assert.equal(ShimPublicKeyInfo.fromBER(new Uint8Array(spki)).algorithm.algorithmId, real);
  });
}

test("malformed SPKI is refused", () => {
  for (const bad of [
    new Uint8Array([]),
    new Uint8Array([0x30]),
    new Uint8Array([0x30, 0x85, 1, 1, 1, 1, 1]),
    new Uint8Array([0x31, 0]),
    new Uint8Array([0x30, 0x10, 0x30, 0x02, 0x06, 0x00]),
  ]) {
    assert.throws(() => ShimPublicKeyInfo.fromBER(bad));
  }
});

test("an RSA public key written as PKCS#1 has the real asn1js's bytes", async () => {
  for (const bits of [1024, 2048]) {
    const pair = await subtle.generateKey(
      { name: "RSASSA-PKCS1-v1_5", modulusLength: bits, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
      true,
      ["sign", "verify"],
    );
    const jwk = await subtle.exportKey("jwk", pair.publicKey);
    const n = new Uint8Array([0, ...Buffer.from(jwk.n!, "base64url")]);
    const e = new Uint8Array(Buffer.from(jwk.e!, "base64url"));
    // The same calls as Fedify's exportMultibaseKey.
    const real = new realAsn1.Sequence({
      value: [
        new realAsn1.Integer({ isHexOnly: true, valueHex: n }),
        new realAsn1.Integer({ isHexOnly: true, valueHex: e }),
      ],
    }).toBER(false);
    const shim = new shimAsn1.Sequence({
      value: [
        new shimAsn1.Integer({ isHexOnly: true, valueHex: n }),
        new shimAsn1.Integer({ isHexOnly: true, valueHex: e }),
      ],
    }).toBER(false);
    assert.deepEqual(new Uint8Array(shim), new Uint8Array(real));
  }
});
