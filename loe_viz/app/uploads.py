"""Reading an uploaded file in an app state: a refusal becomes the state's error, never an exception."""

from __future__ import annotations

from typing import Any, Callable


class ReadsUploads:
    """For states with an ``error`` parameter that read uploaded files."""

    error: str

    def _read_upload(self, read: Callable[[], Any], filename: str) -> Any:
        """``read()``, or None with :attr:`error` saying why the upload was rejected.

        A ``ValueError`` carries the reader's own message (file, line and
        problem); any other exception is reported with its type, so that
        nothing raises out of the state.
        """
        try:
            return read()
        except ValueError as exc:
            self.error = f"Upload rejected: {exc}"
        except Exception as exc:  # never raise out of the state
            self.error = f"Upload rejected: {filename} could not be read ({type(exc).__name__}: {exc})"
        return None
