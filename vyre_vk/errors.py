"""The one root of every error vyre-vk raises for a user to see.

Every message ends with a ``Fix:`` hint. Subclasses keep their builtin base as well
(``ValueError`` for bad programs and inputs, ``RuntimeError`` for the device), so
``except ValueError`` keeps working; ``except VyreError`` catches them all.
``exit_code`` is what the CLI returns for it: 2 for a usage or input error, 3 for
the environment (no device, driver, cache).

Example:
    >>> from vyre_vk.errors import VyreError
    >>> e = VyreError("buffer `x` is empty. Fix: pass at least one element.")
    >>> e.fix
    'pass at least one element.'
"""
from __future__ import annotations

from typing import Optional

EXIT_OK, EXIT_CHECK_FAILED, EXIT_USAGE, EXIT_ENVIRONMENT = 0, 1, 2, 3


class VyreError(Exception):
    """Base of every vyre-vk error: ``message``, ``fix`` and, where known, ``where`` (an IR path, a file)."""

    exit_code: int = EXIT_USAGE
    where: Optional[str] = None

    # Subclasses may set ``message`` / ``fix`` themselves; otherwise both are read from str(self).
    @property
    def message(self) -> str:
        return self.__dict__.get("_message") or (str(self.args[0]) if self.args else "")

    @message.setter
    def message(self, value: str) -> None:
        self.__dict__["_message"] = value

    @property
    def fix(self) -> str:
        """The text after the last ``Fix:`` in the message ('' if there is none: a bug to report)."""
        if "_fix" in self.__dict__:
            return self.__dict__["_fix"]
        _, sep, tail = str(self).rpartition("Fix:")
        return tail.strip() if sep else ""

    @fix.setter
    def fix(self, value: str) -> None:
        self.__dict__["_fix"] = value


class EnvironmentProblem(VyreError):
    """The machine, not the program: no Vulkan driver, an unpatched kp, an unusable device or cache."""

    exit_code = EXIT_ENVIRONMENT


class InputError(VyreError, ValueError):
    """An input does not fit the buffer it is bound to (or names no buffer). ``buffer`` names it."""

    def __init__(self, buffer: Optional[str], message: str, fix: str) -> None:
        self.buffer = self.where = buffer
        where = f"buffer `{buffer}`: " if buffer else ""
        super().__init__(f"{where}{message}. Fix: {fix}.")
        self.fix = fix


class LaunchError(VyreError, ValueError):
    """A dispatch the device cannot run as asked (grid, workgroup, buffer or binding over its limits)."""


class CacheWarning(UserWarning):
    """A SPIR-V cache entry was discarded (corrupt, foreign, unreadable) and recompiled."""


__all__ = ["VyreError", "EnvironmentProblem", "InputError", "LaunchError", "CacheWarning", "EXIT_OK", "EXIT_CHECK_FAILED",
           "EXIT_USAGE", "EXIT_ENVIRONMENT"]
