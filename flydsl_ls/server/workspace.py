"""Settings as they change: initializationOptions, workspace/didChangeConfiguration,
workspace/configuration, and edits to pyproject.toml (which holds ``[tool.flydsl-ls]``)."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import to_fs_path

from flydsl_ls.server import diagnostics, inlay_hints
from flydsl_ls.server import log as server_log
from flydsl_ls.server.settings import SECTIONS, EditorSettings, parse

if TYPE_CHECKING:
    from flydsl_ls.server.app import FlyServer

log = logging.getLogger(__name__)
SECTION = SECTIONS[0]


def apply_initialization_options(server: FlyServer, options: Any) -> None:
    server.session.init_settings = _parsed(options, "initializationOptions")
    _apply_log_level(server)


def _parsed(raw: Any, source: str) -> EditorSettings:
    settings, warnings = parse(raw, source)
    for warning in warnings:
        log.warning("%s", warning, extra=server_log.SHOW_USER)
    return settings


def _apply_log_level(server: FlyServer) -> None:
    level = server.session.editor.log_level
    if level:
        server_log.set_level(level)


async def did_change_configuration(server: FlyServer, params: types.DidChangeConfigurationParams) -> None:
    raw = params.settings
    if not raw and server.session.features.configuration:
        raw = await _pull_configuration(server)
    _take(server, _parsed(raw, "workspace/didChangeConfiguration"))


async def pull_configuration(server: FlyServer) -> None:
    """At start, the client's ``flydsl-ls`` section, when it has one."""
    if not server.session.features.configuration:
        return
    raw = await _pull_configuration(server)
    if raw:
        _take(server, _parsed(raw, "workspace/configuration"))


def _take(server: FlyServer, settings: EditorSettings) -> None:
    """The client's settings replace the last ones it sent."""
    hints = server.session.editor.hints
    server.session.config_settings = settings
    _apply_log_level(server)
    settings_changed(server)
    if server.session.editor.hints != hints:
        inlay_hints.refresh(server)


async def _pull_configuration(server: FlyServer) -> Any:
    try:
        result = await server.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
        )
    except Exception as error:  # the client may not answer; settings stay as they are
        log.info("workspace/configuration failed: %s", error)
        return None
    return result[0] if result else None


# pyproject.toml holds [tool.flydsl-ls]; these and the requirements files pin FlyDSL.
_SETTINGS_FILES = re.compile(r"/(pyproject\.toml|setup\.py|requirements[^/]*\.txt)$")


def is_settings_file(uri: str) -> bool:
    return bool(_SETTINGS_FILES.search(uri))


def did_change_watched_files(server: FlyServer, params: types.DidChangeWatchedFilesParams) -> None:
    for change in params.changes:
        if change.uri.endswith(".py") and change.uri.startswith("file:"):
            server.session.project.forget(Path(to_fs_path(change.uri)))
    if any(is_settings_file(change.uri) for change in params.changes):
        settings_changed(server)


def settings_changed(server: FlyServer) -> None:
    server.session.settings_changed()
    diagnostics.refresh_all(server)


async def watch_settings_files(server: FlyServer) -> None:
    if not server.session.features.watched_files_registration:
        return
    try:
        await server.client_register_capability_async(
            types.RegistrationParams(
                registrations=[
                    types.Registration(
                        id="flydsl-ls-pyproject",
                        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                        register_options=types.DidChangeWatchedFilesRegistrationOptions(
                            watchers=[
                                types.FileSystemWatcher(glob_pattern=pattern)
                                for pattern in (
                                    "**/pyproject.toml",
                                    "**/setup.py",
                                    "**/requirements*.txt",
                                    "**/*.py",
                                )
                            ]
                        ),
                    )
                ]
            )
        )
    except Exception as error:
        log.info("could not watch pyproject.toml files: %s", error)
