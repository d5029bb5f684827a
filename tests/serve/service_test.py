#!/usr/bin/env python3
"""`nextword serve` under a service manager (docs/serving.md, "Run the server
as a service"), with systemd's own tools and protocol, no systemd running:

  - socket activation: systemd-socket-activate listens, hands the socket
    to `nextword serve` on the first connection (LISTEN_FDS), and that
    connection is answered; the line on stderr names the socket's address;
  - two sockets, a datagram socket, or --host/--port beside a handed-over
    socket are exit 2 with one line naming LISTEN_FDS or the option;
    LISTEN_FDS meant for another process (LISTEN_PID) is left alone;
  - readiness: with $NOTIFY_SOCKET, serve sends READY=1 and its status line
    once it answers, and STOPPING=1 on SIGTERM (exit 0).

    python3 tests/serve/service_test.py BUILD/nextword
"""
import http.client
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

BINARY = None
TIMEOUT = 60
# The model by its directory: systemd-socket-activate starts the server with
# an environment of its own, none of the search path's variables in it.
STORIES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "stories")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def predict(port, phrase):
    deadline = time.monotonic() + TIMEOUT
    while True:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
            c.request("POST", "/v1/predict", body='{"phrase": "%s", "k": 1}' % phrase)
            r = c.getresponse()
            return r.status, r.read().decode()
        except ConnectionRefusedError:  # not listening yet
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def activated(test, *listen, args=(), datagram=False):
    """systemd-socket-activate listening on each port of `listen`, to run
    `nextword serve --model STORIES ARGS` on the first connection; killed
    at the end of `test` if it still runs."""
    command = ["systemd-socket-activate", *(["--datagram"] if datagram else [])]
    for port in listen:
        command += ["-l", f"127.0.0.1:{port}"]
    process = subprocess.Popen([*command, BINARY, "serve", "--model", STORIES, *args],
                               stderr=subprocess.PIPE, text=True)
    test.addCleanup(kill, process)
    for _ in listen:  # "Listening on 127.0.0.1:PORT as 3.": it accepts from here on
        line = process.stderr.readline()
        if not line.startswith("Listening on "):
            raise AssertionError("systemd-socket-activate: " + line)
    return process


def kill(process):
    if process.poll() is None:
        process.kill()
        process.wait()
    if not process.stderr.closed:
        process.stderr.close()


def finish(process, stop=True):
    """SIGTERM (unless not `stop`); its exit code and what it wrote on stderr."""
    if stop and process.poll() is None:
        process.send_signal(signal.SIGTERM)
    code = process.wait(timeout=TIMEOUT)
    err = process.stderr.read()
    process.stderr.close()
    return code, err


def ours(stderr):
    """The lines nextword wrote (systemd-socket-activate's own say what it does)."""
    return [line for line in stderr.splitlines() if line.startswith("nextword: ")]


def poke(port):
    """One connection, to make systemd-socket-activate start the server."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as s:
            s.sendall(b"GET /health HTTP/1.0\r\n\r\n")
            s.recv(1)
    except OSError:
        pass


class SocketActivation(unittest.TestCase):
    def test_serves_on_the_socket_it_is_handed(self):
        port = free_port()
        process = activated(self, port)
        status, body = predict(port, "once upon a")
        self.assertEqual(status, 200, body)
        self.assertIn('"word":"time"', body)
        code, err = finish(process)
        self.assertEqual(code, 0, err)
        self.assertEqual(len(ours(err)), 1, err)
        self.assertRegex(ours(err)[0], rf"^nextword: listening on http://127\.0\.0\.1:{port} "
                                       r"\(\d+ workers?; the socket from systemd\)$")

    def check_refused(self, process, port, message):
        poke(port)
        code, err = finish(process, stop=False)
        self.assertEqual(code, 2, err)
        self.assertEqual(ours(err), ["nextword: " + message])

    def test_two_sockets(self):
        port = free_port()
        self.check_refused(activated(self, port, free_port()), port,
                           "LISTEN_FDS: systemd passed 2 sockets; nextword serve listens on one "
                           "(one ListenStream= in nextword.socket)")

    def test_a_datagram_socket(self):
        port = free_port()
        process = activated(self, port, datagram=True)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(b"x", ("127.0.0.1", port))
        code, err = finish(process, stop=False)
        self.assertEqual(code, 2, err)
        self.assertEqual(ours(err), ["nextword: LISTEN_FDS: the socket systemd passed is not a "
                                     "listening TCP socket (ListenStream=ADDRESS:PORT in "
                                     "nextword.socket)"])

    def test_an_address_beside_the_socket(self):
        for option in ("--host", "--port"):
            with self.subTest(option=option):
                port = free_port()
                value = "127.0.0.1" if option == "--host" else "8080"
                self.check_refused(activated(self, port, args=(option, value)), port,
                                   f"{option}: systemd passed the listening socket (LISTEN_FDS): "
                                   "its address is nextword.socket's ListenStream=")

    def test_another_process_sockets_are_left_alone(self):
        env = dict(os.environ, LISTEN_FDS="1", LISTEN_PID="1")
        process = subprocess.Popen([BINARY, "serve", "--model", STORIES, "--port", "0"],
                                   stderr=subprocess.PIPE, text=True, env=env)
        self.addCleanup(kill, process)
        line = process.stderr.readline()
        m = re.match(r"nextword: listening on http://127\.0\.0\.1:(\d+) \(\d+ workers?\)$", line)
        self.assertTrue(m, line)
        self.assertEqual(predict(int(m.group(1)), "once upon a")[0], 200)
        self.assertEqual(finish(process), (0, ""))

    def test_a_listen_pid_that_is_no_number(self):
        r = subprocess.run([BINARY, "serve", "--model", STORIES, "--port", "0"],
                           capture_output=True, text=True, timeout=TIMEOUT,
                           env=dict(os.environ, LISTEN_FDS="1", LISTEN_PID="12x"))
        self.assertEqual((r.returncode, r.stdout), (2, ""))
        self.assertEqual(r.stderr, "nextword: LISTEN_FDS: Invalid argument\n")


class Readiness(unittest.TestCase):
    def test_the_abstract_namespace(self):
        """NOTIFY_SOCKET=@name: a socket of Linux's abstract namespace."""
        name = "nextword-notify-%d" % os.getpid()
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
            notify.bind("\0" + name)
            notify.settimeout(TIMEOUT)
            process = subprocess.Popen([BINARY, "serve", "--model", STORIES, "--port", "0"],
                                       stderr=subprocess.PIPE, text=True,
                                       env=dict(os.environ, NOTIFY_SOCKET="@" + name))
            self.addCleanup(kill, process)
            line = process.stderr.readline()
            self.assertEqual(notify.recv(4096).decode(),
                             "READY=1\nSTATUS=" + line[len("nextword: "):].rstrip("\n"))
            process.send_signal(signal.SIGTERM)
            self.assertEqual(notify.recv(4096), b"STOPPING=1")
            self.assertEqual(finish(process, stop=False), (0, ""))

    def test_ready_then_stopping(self):
        with tempfile.TemporaryDirectory() as tmp, \
                socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
            path = os.path.join(tmp, "notify")
            notify.bind(path)
            notify.settimeout(TIMEOUT)
            process = subprocess.Popen([BINARY, "serve", "--model", STORIES, "--port", "0"],
                                       stderr=subprocess.PIPE, text=True,
                                       env=dict(os.environ, NOTIFY_SOCKET=path))
            self.addCleanup(kill, process)
            line = process.stderr.readline()
            message = notify.recv(4096).decode()
            self.assertEqual(message, "READY=1\nSTATUS=" + line[len("nextword: "):].rstrip("\n"))
            port = int(re.search(r":(\d+) ", line).group(1))
            self.assertEqual(predict(port, "once upon a")[0], 200)  # ready means it answers
            process.send_signal(signal.SIGTERM)
            self.assertEqual(notify.recv(4096), b"STOPPING=1")
            self.assertEqual(finish(process, stop=False), (0, ""))


if __name__ == "__main__":
    BINARY = os.path.abspath(sys.argv[1])
    unittest.main(argv=[sys.argv[0], "-v"])
