"""Signing in to Kaggle with its own client (the kaggle package): an authenticated client for
the `kaggle` commands, and the username `kernel` writes into a notebook's id."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from pathlib import Path

from ..runtime.errors import UserError, briefly, first_line

# Every way the client signs in, newest first, as the client itself looks for them.
CREDENTIALS_HELP = (
    "run `kaggle auth login`; or create an API token on kaggle.com (Settings > API) and set "
    "KAGGLE_API_TOKEN to it or save it as ~/.kaggle/access_token; or, with a legacy API key, save "
    "kaggle.json as ~/.kaggle/kaggle.json (chmod 600) or set KAGGLE_USERNAME and KAGGLE_KEY"
)
# Where `kaggle auth login` keeps its credentials, the username among them.
LOGIN_FILE = Path("~/.kaggle/credentials.json")


def kaggle_client_class():
    """KaggleApi. Importing the kaggle package signs in and prints help to stdout when it
    cannot; that print is swallowed here, and `client` says it plainly. Before kaggle 2.2
    (Colab and Kaggle's GPU image carry 2.0.2) that import also exits without credentials
    and raises without a network; the class was loaded by then, and is taken as it is."""
    extended = "kaggle.api.kaggle_api_extended"
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            from kaggle.api.kaggle_api_extended import KaggleApi
        except (Exception, SystemExit):
            if extended not in sys.modules:  # not the sign-in: the client itself is broken
                raise
            KaggleApi = sys.modules[extended].KaggleApi
    return KaggleApi


def client():
    """An authenticated client, or a UserError that says where the credentials go. A token
    is checked with Kaggle, so this may reach the network (see `unreachable`)."""
    api = kaggle_client_class()()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            api.authenticate()
    except SystemExit:  # the client's own way of saying "no credentials"
        check_key_file(Path(api.config))
        raise UserError(f"no Kaggle credentials found: {CREDENTIALS_HELP}") from None
    return api


def check_key_file(path: Path) -> None:
    """kaggle.json, where there is one, as Kaggle's settings page gives it: the client skips
    a file it cannot read and says only that it found no credentials."""
    if not path.is_file():
        return
    fix = (
        f"create a new API token on kaggle.com (Settings > API) and save it as {path}, or "
        "remove the file and sign in another way"
    )
    try:
        held = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError) as error:
        raise UserError(f"{path} is not readable JSON ({first_line(error)}); {fix}") from None
    if not isinstance(held, dict) or not all(
        isinstance(held.get(field), str) and held[field] for field in ("username", "key")
    ):
        raise UserError(f'{path} holds no "username" and "key"; {fix}')


def unreachable(error: Exception, doing: str) -> UserError:
    """The one line for a request that never reached Kaggle."""
    return UserError(
        f"cannot reach Kaggle while {doing} ({briefly(error)}); check this machine's network (in a "
        "Kaggle notebook: Settings > Internet on), then run the same command again"
    )


def username() -> str:
    """The account the client signs in as, "" when it has no credentials: read from its
    configuration without a network call ($KAGGLE_USERNAME, kaggle.json, the file `kaggle
    auth login` writes); a bare API token names no one, so Kaggle is asked whose it is."""
    if os.environ.get("KAGGLE_USERNAME"):
        return os.environ["KAGGLE_USERNAME"]
    api = kaggle_client_class()()
    configured = api.read_config_environment(api.read_config_file(quiet=True))
    if configured.get("username"):
        return configured["username"]
    with contextlib.suppress(OSError, ValueError):
        logged_in = json.loads(LOGIN_FILE.expanduser().read_text()).get("username")
        if logged_in:
            return logged_in
    from kagglesdk import get_access_token_from_env

    if not get_access_token_from_env()[0]:
        check_key_file(Path(api.config))
        return ""
    import requests

    try:
        return client().get_config_value("username") or ""
    except (requests.ConnectionError, requests.Timeout) as error:
        raise unreachable(
            error, "asking whose API token this is (or pass --kaggle-user)"
        ) from error
