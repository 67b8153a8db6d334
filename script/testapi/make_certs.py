"""Generates the throw-away TLS material for the local test servers.

Usage: make_certs.py OUTPUT_DIR

Writes into OUTPUT_DIR:
  ca.pem / ca.key                 self-signed test CA (CA:true)
  server.pem / server.key         leaf for 127.0.0.1 + localhost, valid now
  server.der                      the same leaf certificate, DER encoded
  expired.pem / expired.key       leaf for 127.0.0.1 + localhost, already expired
  wronghost.pem / wronghost.key   leaf whose only SAN is DNS:wrong.example
  other.key                       an unrelated key pair (for a non-matching pin)
  client.pem / client.key         client leaf (clientAuth) signed by the test CA, for mutual TLS
  client-encrypted.key            the same key, encrypted with the password "client-secret"
  client.p12                      the client leaf, its key and the CA as PKCS#12, password "client-secret"
  stranger.pem / stranger.key     client leaf signed by a CA the servers do not know
and prints a JSON object with the SPKI pins (base64 of the SHA-256 of the
DER SubjectPublicKeyInfo) of the server leaf and of the unrelated key.
"""

import base64
import datetime
import hashlib
import ipaddress
import json
import os
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

DAY = datetime.timedelta(days=1)
CLIENT_PASSWORD = b"client-secret"
LOCAL_NAMES = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]


def new_key():
    # RSA 2048 is accepted by every TLS stack the Swift side may use.
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def spki_pin(public_key):
    """base64(SHA-256(DER SubjectPublicKeyInfo)), the format curl and HPKP use."""
    spki = public_key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.b64encode(hashlib.sha256(spki).digest()).decode("ascii")


def name(common_name):
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Networking Test"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def make_ca(now):
    key = new_key()
    subject = name("Networking Test CA")
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        # Wide enough to cover the expired leaf's validity period too.
        .not_valid_before(now - 60 * DAY)
        .not_valid_after(now + 60 * DAY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True,
                crl_sign=True, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def make_leaf(ca_key, ca_cert, common_name, san_names, not_before, not_after,
              usage=ExtendedKeyUsageOID.SERVER_AUTH):
    key = new_key()
    cert = (
        x509.CertificateBuilder()
        .subject_name(name(common_name))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=True,
                data_encipherment=False, key_agreement=False, key_cert_sign=False,
                crl_sign=False, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(x509.SubjectAlternativeName(san_names), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    return key, cert


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def write_key(path, key):
    write(
        path,
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        ),
    )
    os.chmod(path, 0o600)


def write_pair(out_dir, stem, key, cert):
    write(os.path.join(out_dir, stem + ".pem"), cert.public_bytes(serialization.Encoding.PEM))
    write_key(os.path.join(out_dir, stem + ".key"), key)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_certs.py OUTPUT_DIR")
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)

    ca_key, ca_cert = make_ca(now)
    write_pair(out_dir, "ca", ca_key, ca_cert)

    server_key, server_cert = make_leaf(
        ca_key, ca_cert, "127.0.0.1", LOCAL_NAMES, now - DAY, now + 30 * DAY
    )
    write_pair(out_dir, "server", server_key, server_cert)
    write(os.path.join(out_dir, "server.der"), server_cert.public_bytes(serialization.Encoding.DER))

    expired_key, expired_cert = make_leaf(
        ca_key, ca_cert, "127.0.0.1", LOCAL_NAMES, now - 30 * DAY, now - DAY
    )
    write_pair(out_dir, "expired", expired_key, expired_cert)

    wrong_key, wrong_cert = make_leaf(
        ca_key, ca_cert, "wrong.example", [x509.DNSName("wrong.example")], now - DAY, now + 30 * DAY
    )
    write_pair(out_dir, "wronghost", wrong_key, wrong_cert)

    other_key = new_key()
    write_key(os.path.join(out_dir, "other.key"), other_key)

    client_key, client_cert = make_leaf(
        ca_key, ca_cert, "Networking Test Client", [x509.DNSName("client.example")], now - DAY,
        now + 30 * DAY, usage=ExtendedKeyUsageOID.CLIENT_AUTH
    )
    write_pair(out_dir, "client", client_key, client_cert)
    encrypted = client_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(CLIENT_PASSWORD),
    )
    write(os.path.join(out_dir, "client-encrypted.key"), encrypted)
    write(
        os.path.join(out_dir, "client.p12"),
        pkcs12.serialize_key_and_certificates(
            b"Networking Test Client", client_key, client_cert, [ca_cert],
            serialization.BestAvailableEncryption(CLIENT_PASSWORD),
        ),
    )
    stranger_ca_key, stranger_ca_cert = make_ca(now)
    stranger_key, stranger_cert = make_leaf(
        stranger_ca_key, stranger_ca_cert, "Stranger", [x509.DNSName("stranger.example")],
        now - DAY, now + 30 * DAY, usage=ExtendedKeyUsageOID.CLIENT_AUTH
    )
    write_pair(out_dir, "stranger", stranger_key, stranger_cert)

    print(
        json.dumps(
            {
                "server_pin": spki_pin(server_key.public_key()),
                "other_pin": spki_pin(other_key.public_key()),
            }
        )
    )


if __name__ == "__main__":
    main()
