"""Boot configuration: the environment (``SVC__A__B`` ↔ ``a.b``) and an optional TOML file.

The environment wins over the file. Every key must be declared in ``core.settings``;
an unknown key or a value of the wrong type stops the process at start with a sentence
naming the variable, rather than being silently ignored.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import field
from pathlib import Path
from typing import Any, Mapping

from core import settings as registry
from core.records import frozen

ENV_PREFIX = "SVC__"
CONFIG_FILE_ENV = "SVC_CONFIG"
DEFAULT_CONFIG_FILE = "svc.toml"


class ConfigError(Exception):
    """The boot configuration cannot be used; the message is shown as it is."""


def env_name(key: str) -> str:
    return ENV_PREFIX + key.replace(".", "__").upper()


def _key_from_env(name: str) -> str:
    return name[len(ENV_PREFIX):].lower().replace("__", ".")


def _flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for name, value in table.items():
        key = f"{prefix}{name}"
        if isinstance(value, dict):
            flat.update(_flatten(value, key + "."))
        else:
            flat[key] = value
    return flat


def _read_file(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return _flatten(tomllib.load(handle))
    except OSError as exc:
        raise ConfigError(f"cannot read configuration file {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"configuration file {path} is not valid TOML: {exc}") from None


def _typed(key: str, value: Any, source: str) -> Any:
    try:
        setting = registry.get(key)
        if isinstance(value, str) and setting.kind is not str:
            value = registry.parse_boot_text(setting, value)
        return registry.check_boot_value(setting, value)
    except registry.SettingError as exc:
        raise ConfigError(f"{source}: {exc.message}") from None


@frozen
class BootConfig:
    """The boot values that were given; anything absent takes its declared default."""

    values: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return registry.resolve(key, self.values, {})

    @property
    def data_dir(self) -> Path:
        return Path(self["storage.data_dir"]).expanduser().resolve()

    @property
    def recordings_dir(self) -> Path:
        return Path(self["storage.recordings_dir"]).expanduser().resolve()

    def with_values(self, **overrides: Any) -> "BootConfig":
        """A copy with some keys replaced, given as ``a__b=value`` (tests and CLI flags)."""
        merged = dict(self.values)
        for name, value in overrides.items():
            key = name.replace("__", ".")
            merged[key] = _typed(key, value, f"override {key}")
        return BootConfig(merged)


def load(environ: Mapping[str, str] | None = None, file: str | Path | None = None) -> BootConfig:
    """Read the TOML file (``--config``, ``SVC_CONFIG`` or ./svc.toml), then the environment."""
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    path = file or environ.get(CONFIG_FILE_ENV)
    if path is None and Path(DEFAULT_CONFIG_FILE).is_file():
        path = DEFAULT_CONFIG_FILE
    if path is not None:
        for key, value in _read_file(Path(path)).items():
            values[key] = _typed(key, value, f"{path}: {key}")
    for name, text in environ.items():
        if not name.startswith(ENV_PREFIX):
            continue
        key = _key_from_env(name)
        if key not in registry.REGISTRY:
            raise ConfigError(f"{name} is not a setting svc knows")
        values[key] = _typed(key, text, name)
    return BootConfig(values)
