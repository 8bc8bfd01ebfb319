"""KaTeX's Node.js server: started reliably, and ended with the build.

sphinxcontrib.katex starts one `node katex-server.js` per build, waits for its
socket file and connects at once, and stops the server at interpreter exit.
Seen here under load: the socket file existed before the server listened on
it, the connection was refused, the build failed, and the server it had
started lived on with the build's stderr, so whatever read that stream (a
test's subprocess.run, a CI step) waited for good. So:

- the connection is retried until the server listens (within the extension's
  own start-up timeout), instead of failing at the first refusal;
- the server is started with its stderr discarded (its errors reach the build
  as rendering errors) and, on Linux, with PR_SET_PDEATHSIG: the kernel stops
  it when the build's process ends, however that happens.
"""

from __future__ import annotations

import functools
import socket
import subprocess
import time

from pagekit.executor import die_with_parent  # PR_SET_PDEATHSIG on Linux; elsewhere nothing


def start_server_process(cls, rundir, timeout):
    """sphinxcontrib.katex's KaTeXServer.start_server_process, with the
    connection retried while the server is not yet listening."""
    import sphinxcontrib.katex as katex

    socket_path = rundir / "katex.sock"
    process = katex.Popen(
        cls.build_command(socket=socket_path), stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=rundir
    )
    start = time.monotonic()
    while True:
        remaining = start + timeout - time.monotonic()
        if remaining <= 0:
            process.kill()
            raise cls.timeout_error(timeout)
        if socket_path.is_socket():
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                with katex.socket_timeout(sock, remaining):
                    sock.connect(str(socket_path))
                return process, sock
            except (ConnectionRefusedError, FileNotFoundError):  # bound, not yet listening
                sock.close()
            except socket.timeout:
                sock.close()
                process.kill()
                raise cls.timeout_error(timeout) from None
        time.sleep(katex.ONE_MILLISECOND)


def setup(app):
    import sphinxcontrib.katex as katex

    katex.Popen = functools.partial(subprocess.Popen, stderr=subprocess.DEVNULL, preexec_fn=die_with_parent)
    katex.KaTeXServer.start_server_process = classmethod(start_server_process)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
