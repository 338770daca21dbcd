"""Settings of the served explorer that protect the server (used by ``apps/explorer.py``).

* :func:`require_websocket_origin`: Bokeh checks a websocket's ``Origin``
  against ``--allow-websocket-origin``, but Tornado only runs that check when
  the header is present, so a client that sends no ``Origin`` (a script, not a
  browser) would be given a session.  After this call such a connection is
  refused with 403.
* :data:`MAX_UPLOAD_BYTES`: the largest file the upload boxes accept; the
  browser refuses a larger one with a message before sending anything.  A file
  travels base64-encoded in one websocket message, so the limit stays well
  below Bokeh's websocket message limit (20 MiB by default,
  ``--websocket-max-message-size``): an upload never closes the connection.
* :func:`warn_if_exposed`: logs a warning when ``panel serve`` was started
  without ``--address`` (it then listens on every interface).
"""

from __future__ import annotations

import logging
import sys

__all__ = ["MAX_UPLOAD_BYTES", "MAX_UPLOAD_TEXT", "require_websocket_origin", "warn_if_exposed", "harden"]

log = logging.getLogger(__name__)

#: Largest upload accepted (the upload boxes refuse larger files before sending them).
MAX_UPLOAD_BYTES = 10 * 2**20
#: The same limit as FileDropper/FileInput write it.
MAX_UPLOAD_TEXT = "10MB"

_patched = False


def require_websocket_origin() -> None:
    """Refuse websocket connections that carry no ``Origin`` header (idempotent)."""
    global _patched
    if _patched:
        return
    from bokeh.server.views.ws import WSHandler

    original = WSHandler.get

    async def get(self, *args, **kwargs):
        headers = self.request.headers
        if "Origin" not in headers and "Sec-Websocket-Origin" not in headers:
            log.warning("Refusing a websocket connection without an Origin header from %s",
                        self.request.remote_ip)
            self.set_status(403)
            self.finish("websocket connections must send an Origin header")
            return None
        return await original(self, *args, **kwargs)

    get.__wrapped__ = original
    WSHandler.get = get
    _patched = True


def warn_if_exposed() -> None:
    """Warn once when ``panel serve`` listens on every interface (no ``--address``)."""
    argv = sys.argv
    if "serve" in argv and not any(a == "--address" or a.startswith("--address=") for a in argv):
        log.warning("The explorer listens on every network interface. To keep it on this machine use "
                    "`panel serve apps/explorer.py --address 127.0.0.1`; to share it on a network, "
                    "name the address and the page's host with --address and --allow-websocket-origin.")


_hardened = False


def harden() -> None:
    """Everything above, once per process (``apps/explorer.py`` calls it)."""
    global _hardened
    require_websocket_origin()
    if not _hardened:
        _hardened = True
        warn_if_exposed()
