"""Accounts: a name claimed with a password, and the login sessions that prove it (issue 52, item 2).

Standard library only. A claimed name can be used at a table only by a connection that carries that
account's login session (the ``mulle_session`` cookie, sent with the WebSocket's upgrade request);
anyone else is refused with error 1002 naming why. Unclaimed names stay free for guests, who play
unrated.

**Passwords** are hashed with scrypt (:func:`hashlib.scrypt`, memory-hard) with a fresh 16-byte salt:
``N = 2**14, r = 8, p = 1`` (16 MiB and about 50 ms a hash on this machine: OWASP's minimum is
``N = 2**17`` for 128 MiB, which a Raspberry Pi serving a card room cannot give every login; the
parameters are kept in each hash, so a later server can raise them and still check old ones). The
stored form is ``scrypt$N$r$p$salt$hash`` (base64). Checks compare in constant time.

**Sessions** are 32 random bytes (:func:`secrets.token_urlsafe`) given to the browser once, in an
``HttpOnly``, ``SameSite=Strict`` cookie (``Secure`` as configured: see ``cookie_secure`` in
:class:`~live.config.LiveConfig`); the store keeps only their SHA-256, so a copy of the database
opens no account. Neither a password nor a token is ever logged, stored in clear or sent to anyone
but its owner (tests in ``tests/test_live_accounts.py``).

>>> h = hash_password("correct horse")
>>> h.startswith("scrypt$16384$8$1$"), check_password("correct horse", h), check_password("wrong", h)
(True, True, False)
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import secrets
import threading
import time
from typing import TYPE_CHECKING

from .protocol import ProtocolError, check_name

if TYPE_CHECKING:
    from .store import GameStore

__all__ = ["COOKIE", "MAX_PASSWORD", "MIN_PASSWORD", "SCRYPT_N", "SCRYPT_P", "SCRYPT_R", "SESSION_SECONDS",
           "AccountError", "Accounts", "check_password", "hash_password", "name_key", "token_hash"]

#: scrypt's cost parameters for new hashes (see the module docstring).
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1
#: The name of the login cookie.
COOKIE = "mulle_session"
#: How long a login lasts (30 days).
SESSION_SECONDS = 30 * 86400
#: Password length bounds, in characters (the upper one bounds the hashing work one request can ask for).
MIN_PASSWORD, MAX_PASSWORD = 8, 256


class AccountError(ValueError):
    """A refused account request; ``status`` is the HTTP status it answers with."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def name_key(name: str) -> str:
    """The key a name is claimed under: NFC, stripped, case-folded (``Anna`` and ``ANNA`` are one name)."""
    return name.casefold()


def token_hash(token: str) -> str:
    """The SHA-256 of a session or seat token, as the store keeps it (a token is random, so no salt is needed)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def hash_password(password: str, n: int = SCRYPT_N, r: int = SCRYPT_R, p: int = SCRYPT_P) -> str:
    """``scrypt$N$r$p$salt$hash`` of ``password`` with a fresh salt."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=n, r=r, p=p, dklen=32, maxmem=2**26)
    return f"scrypt${n}${r}${p}${_b64(salt)}${_b64(digest)}"


def check_password(password: str, stored: str) -> bool:
    """Whether ``password`` matches the stored hash (constant-time comparison; a malformed hash matches nothing)."""
    try:
        kind, n, r, p, salt, digest = stored.split("$")
        if kind != "scrypt":
            return False
        want = base64.b64decode(digest)
        got = hashlib.scrypt(password.encode("utf-8"), salt=base64.b64decode(salt), n=int(n), r=int(r), p=int(p),
                             dklen=len(want), maxmem=2**26)
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, want)


def _checked(name: object, password: object) -> tuple[str, str]:
    """The name (as a table sees it) and the password of a request body, or AccountError 400 saying what is wrong."""
    try:
        text = check_name(name, "name", 32)
    except ProtocolError as exc:
        raise AccountError(str(exc)) from None
    if not isinstance(password, str) or not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise AccountError(f"'password' must be a string of {MIN_PASSWORD} to {MAX_PASSWORD} characters")
    return text, password


class Accounts:
    """The accounts of a server's store (see the module docstring). Its methods block (hashing, SQLite): the
    server calls them in a worker thread, except :meth:`is_claimed` (a set lookup) and :meth:`who` (a dict lookup
    in the common case)."""

    def __init__(self, store: GameStore) -> None:
        self.store = store
        self._claimed = store.claimed()
        self._lock = threading.Lock()
        #: token hash -> (name_key, name, expires): recent lookups, so a join does not read the database.
        self._cache: dict[str, tuple[str, str, float]] = {}

    def is_claimed(self, name: str) -> bool:
        """Whether ``name`` (any case) belongs to an account."""
        return name_key(name) in self._claimed

    def create(self, name: object, password: object) -> str:
        """Claim ``name`` with ``password``; return the name as kept. AccountError 400 (bad input) or 409 (taken)."""
        text, pw = _checked(name, password)
        key = name_key(text)
        if key in self._claimed:
            raise AccountError(f"the name {text!r} is claimed already; log in, or choose another name", 409)
        if not self.store.create_account(key, text, hash_password(pw)):
            raise AccountError(f"the name {text!r} is claimed already; log in, or choose another name", 409)
        with self._lock:
            self._claimed.add(key)
        return text

    def login(self, name: object, password: object) -> tuple[str, str]:
        """Check the password; return ``(session token, name)``. AccountError 401 for an unknown name or a wrong
        password (one message for both: it does not say which names exist)."""
        text, pw = _checked(name, password)
        row = self.store.account(name_key(text))
        # A hash is computed even for an unknown name, so the time taken does not tell which names exist.
        if row is None:
            check_password(pw, _dummy_hash())
            raise AccountError("wrong name or password", 401)
        if not check_password(pw, row[1]):
            raise AccountError("wrong name or password", 401)
        token = secrets.token_urlsafe(32)
        self.store.add_session(token_hash(token), name_key(text), time.time() + SESSION_SECONDS)
        return token, row[0]

    def logout(self, token: str) -> None:
        """End the session of ``token`` (an unknown token is no error)."""
        h = token_hash(token)
        with self._lock:
            self._cache.pop(h, None)
        self.store.delete_session(h)

    def who(self, token: str | None) -> str | None:
        """The account name of a login token, or ``None`` (no token, unknown or expired)."""
        if not token or len(token) > 128:
            return None
        h = token_hash(token)
        now = time.time()
        hit = self._cache.get(h)
        if hit is not None and hit[2] > now:
            return hit[1]
        row = self.store.session(h)
        if row is None:
            return None
        with self._lock:
            if len(self._cache) > 10_000:
                self._cache.clear()
            self._cache[h] = (row[0], row[1], now + 300)  # re-read at least every 5 minutes (a logout elsewhere)
        return row[1]


@functools.cache
def _dummy_hash() -> str:
    """A hash to check a password against when the name is unknown (same cost as a real check); made once."""
    return hash_password(secrets.token_urlsafe(16))
