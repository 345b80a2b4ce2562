"""Settings as they change: initializationOptions, workspace/didChangeConfiguration,
workspace/configuration, and edits to pyproject.toml (which holds ``[tool.flydsl-ls]``)."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from flydsl_ls.server import diagnostics, inlay_hints
from flydsl_ls.server import log as server_log
from flydsl_ls.server.client import Client
from flydsl_ls.server.session import Session
from flydsl_ls.server.settings import SECTIONS, EditorSettings, parse

log = logging.getLogger(__name__)
SECTION = SECTIONS[0]


def apply_initialization_options(session: Session, options: Any) -> None:
    session.init_settings = _parsed(options, "initializationOptions")
    _apply_log_level(session)


def _parsed(raw: Any, source: str) -> EditorSettings:
    settings, warnings = parse(raw, source)
    for warning in warnings:
        log.warning("%s", warning, extra=server_log.SHOW_USER)
    return settings


def _apply_log_level(session: Session) -> None:
    level = session.editor.log_level
    if level:
        server_log.set_level(level)


async def did_change_configuration(session: Session, client: Client, params: types.DidChangeConfigurationParams) -> None:
    raw = params.settings
    if not raw and session.features.configuration:
        raw = await _pull_configuration(client)
    _take(session, client, _parsed(raw, "workspace/didChangeConfiguration"))


async def pull_configuration(session: Session, client: Client) -> None:
    """At start, the client's ``flydsl-ls`` section, when it has one."""
    if not session.features.configuration:
        return
    raw = await _pull_configuration(client)
    if raw:
        _take(session, client, _parsed(raw, "workspace/configuration"))


def _take(session: Session, client: Client, settings: EditorSettings) -> None:
    """The client's settings replace the last ones it sent."""
    hints = (session.editor.hints, session.editor.isa_counts)
    session.config_settings = settings
    _apply_log_level(session)
    settings_changed(session, client)
    if (session.editor.hints, session.editor.isa_counts) != hints:
        inlay_hints.refresh(session, client)


async def _pull_configuration(client: Client) -> Any:
    try:
        result = await client.request(
            types.WORKSPACE_CONFIGURATION,
            types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)]),
        )
    except Exception as error:  # the client may not answer; settings stay as they are
        log.info("workspace/configuration failed: %s", error)
        return None
    return result[0] if result else None


# pyproject.toml holds [tool.flydsl-ls]; these and the requirements files pin FlyDSL.
_SETTINGS_FILES = re.compile(r"/(pyproject\.toml|setup\.py|requirements[^/]*\.txt)$")


def is_settings_file(uri: str) -> bool:
    return bool(_SETTINGS_FILES.search(uri))


def did_change_watched_files(session: Session, client: Client, params: types.DidChangeWatchedFilesParams) -> None:
    for change in params.changes:
        if change.uri.endswith(".py") and change.uri.startswith("file:"):
            session.project.forget(Path(to_fs_path(change.uri)))
    if any(is_settings_file(change.uri) for change in params.changes):
        settings_changed(session, client)


def settings_changed(session: Session, client: Client) -> None:
    session.settings_changed()
    diagnostics.refresh_all(session, client)


async def watch_settings_files(session: Session, client: Client) -> None:
    if not session.features.watched_files_registration:
        return
    try:
        await client.request(
            types.CLIENT_REGISTER_CAPABILITY,
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
