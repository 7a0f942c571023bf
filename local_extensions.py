"""Jinja settings for the template's files, loaded by cookiecutter (`_extensions` in
cookiecutter.json; cookiecutter finds this module beside it)."""

from jinja2.ext import Extension


class UnicodeJson(Extension):
    """`tojson` writes characters beyond ASCII as they are. By default it escapes them, and a
    character beyond the first 65,536 (an emoji in a project's name) becomes a pair of
    \\uXXXX halves that a Python string literal reads as two lone surrogates: no file,
    notebook or kernel-metadata.json can hold the title then."""

    def __init__(self, environment):
        super().__init__(environment)
        environment.policies["json.dumps_kwargs"] = {"sort_keys": True, "ensure_ascii": False}
