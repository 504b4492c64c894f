"""An independent RSA encryptor for the Access Code V2 key (Tests/TLSTests/RSAKeyTests.swift):
Debian's python3-cryptography with the samples' padding.

    python3 -m tmmtools.peers.rsa_encrypt N E PLAINTEXT [first-byte-zero]

Encrypts PLAINTEXT with RSA-OAEP(SHA-256, MGF1-SHA-256) under the JWK's n and e (base64url), as
the samples do, and prints the standard Base64 of the ciphertext. With `first-byte-zero`,
encrypts again until the ciphertext begins with 0x00 (one in 256 does).
"""

import base64
import sys

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa


def b64url(text):
    return int.from_bytes(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)), "big")


def main(n, e, plaintext, first_byte_zero):
    key = rsa.RSAPublicNumbers(b64url(e), b64url(n)).public_key()
    oaep = padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA256()), algorithm=hashes.SHA256(), label=None)
    ciphertext = key.encrypt(plaintext.encode(), oaep)
    while first_byte_zero and ciphertext[0] != 0:
        ciphertext = key.encrypt(plaintext.encode(), oaep)
    print(base64.b64encode(ciphertext).decode())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:] == ["first-byte-zero"])
