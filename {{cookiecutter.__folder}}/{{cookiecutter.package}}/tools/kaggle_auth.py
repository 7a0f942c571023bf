"""Signing in to Kaggle with its own client (the kaggle package): an authenticated client for
the `kaggle` commands, and the username `kernel` writes into a notebook's id, read without a
network call."""

from __future__ import annotations

import contextlib
import io
import os

from ..runtime.config import UserError

CREDENTIALS_HELP = (
    "on kaggle.com open Settings > API > Create New Token, save kaggle.json as "
    "~/.kaggle/kaggle.json (chmod 600), or set KAGGLE_USERNAME and KAGGLE_KEY"
)


def kaggle_client_class():
    """KaggleApi. Importing the kaggle package tries to authenticate and prints help to
    stdout when it cannot; that print is swallowed here, and `client` says it plainly."""
    with contextlib.redirect_stdout(io.StringIO()):
        from kaggle.api.kaggle_api_extended import KaggleApi
    return KaggleApi


def client():
    """An authenticated client, or a UserError that says where the credentials go."""
    api = kaggle_client_class()()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            api.authenticate()
    except SystemExit:  # the client's own way of saying "no credentials"
        raise UserError(f"no Kaggle credentials found: {CREDENTIALS_HELP}") from None
    return api


def configured_username() -> str:
    """The username in the client's configuration (kaggle.json or $KAGGLE_USERNAME), read
    without any network call; "" when there is none."""
    if os.environ.get("KAGGLE_USERNAME"):
        return os.environ["KAGGLE_USERNAME"]
    api = kaggle_client_class()()
    return api.read_config_environment(api.read_config_file(quiet=True)).get("username", "")
