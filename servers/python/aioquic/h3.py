"""HTTP/3 on aioquic's asyncio QUIC server: one H3Connection per QUIC connection, answering
app.answer() for each request's path.

Written on aioquic directly rather than through Hypercorn's QUIC support because the contract
needs two things Hypercorn does not do, and aioquic 1.7.2 does not either without a hand from the
server's code (the two places below that use aioquic's private names):

- Stop: on SIGTERM every connection gets a GOAWAY, then a CONNECTION_CLOSE with H3_NO_ERROR
  (Hypercorn 0.18 stops reading and lets QUIC connections time out). H3Connection has no call
  that sends GOAWAY, so goaway() writes the frame on the connection's control stream
  (`_local_control_stream_id`).
- Malformed requests: RFC 9114 §4.1.2 makes a malformed request a stream error (H3_MESSAGE_ERROR)
  but H3Connection.handle_event closes the whole connection on it (aioquic/h3/connection.py,
  `except ProtocolError` in handle_event). Http3 overrides `_receive_request_or_push_data`,
  where the request's header section is decoded and validated, to reset that stream instead.
"""

import asyncio
import collections
import socket

from aioquic.asyncio import QuicConnectionProtocol
from aioquic.asyncio.server import QuicServer
from aioquic.buffer import encode_uint_var
from aioquic.h3.connection import (
    H3_ALPN,
    ErrorCode,
    FrameType,
    H3Connection,
    H3Stream,
    MessageError,
    encode_frame,
)
from aioquic.h3.events import HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import ConnectionTerminated, ProtocolNegotiated
from aioquic.tls import SessionTicket

import app

# The session tickets this process issued (resumption and 0-RTT), the newest kept: a client that
# never comes back leaves its ticket, so the store is bounded.
TICKETS_KEPT = 65536


class Tickets:
    def __init__(self) -> None:
        self.store: collections.OrderedDict[bytes, SessionTicket] = collections.OrderedDict()

    def add(self, ticket: SessionTicket) -> None:
        self.store[ticket.ticket] = ticket
        if len(self.store) > TICKETS_KEPT:
            self.store.popitem(last=False)

    def take(self, label: bytes) -> SessionTicket | None:
        return self.store.pop(label, None)  # one use each, as RFC 8446 advises for 0-RTT


class Http3(H3Connection):
    """aioquic's H3Connection, with a malformed request a stream error rather than a connection one."""

    def _receive_request_or_push_data(self, stream: H3Stream, data: bytes, stream_ended: bool) -> list:
        try:
            return super()._receive_request_or_push_data(stream, data, stream_ended)
        except MessageError:
            # The header block was decoded (QPACK state intact) before validation failed: refuse
            # this stream in both directions and forget what it sent.
            stream.buffer = b""
            self._quic.reset_stream(stream.stream_id, ErrorCode.H3_MESSAGE_ERROR)
            self._quic.stop_stream(stream.stream_id, ErrorCode.H3_MESSAGE_ERROR)
            return []


class H3Protocol(QuicConnectionProtocol):
    """One QUIC connection: HTTP/3 once ALPN h3 is negotiated, every request answered at once."""

    def __init__(self, *args, open_connections: set, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.http: Http3 | None = None
        self.next_stream = 0  # the first request stream id a GOAWAY would refuse
        self.open_connections = open_connections
        open_connections.add(self)

    def quic_event_received(self, event) -> None:
        if isinstance(event, ProtocolNegotiated) and event.alpn_protocol in H3_ALPN:
            self.http = Http3(self._quic)
        elif isinstance(event, ConnectionTerminated):
            self.open_connections.discard(self)
        if self.http is None:
            return
        for h3_event in self.http.handle_event(event):
            if isinstance(h3_event, HeadersReceived):
                self.answer(h3_event)

    def answer(self, request: HeadersReceived) -> None:
        stream = request.stream_id
        self.next_stream = max(self.next_stream, stream + 4)
        path = next((v for k, v in request.headers if k == b":path"), b"/")
        status, content_type, body = app.answer(path.split(b"?", 1)[0].decode("latin-1"))
        headers = [
            (b":status", b"%d" % status),
            (b"content-type", content_type),
            (b"content-length", b"%d" % len(body)),
        ]
        self.http.send_headers(stream, headers)
        self.http.send_data(stream, body, end_stream=True)
        self.transmit()

    def goaway(self) -> None:
        control = None if self.http is None else self.http._local_control_stream_id
        if control is not None:
            frame = encode_frame(FrameType.GOAWAY, encode_uint_var(self.next_stream))
            self._quic.send_stream_data(control, frame)
            self.transmit()

    def close_now(self) -> None:
        self._quic.close(error_code=ErrorCode.H3_NO_ERROR)
        self.transmit()


class H3Server:
    """aioquic's QuicServer on a UDP socket bound by the caller, and the stop the contract wants."""

    def __init__(self, sock: socket.socket, cert: str, key: str) -> None:
        self.sock = sock
        self.config = QuicConfiguration(is_client=False, alpn_protocols=H3_ALPN)
        self.config.load_cert_chain(cert, key)
        self.tickets = Tickets()
        self.open: set[H3Protocol] = set()
        self.server: QuicServer | None = None

    async def start(self) -> None:
        def protocol(*args, **kwargs) -> H3Protocol:
            return H3Protocol(*args, open_connections=self.open, **kwargs)

        _, self.server = await asyncio.get_running_loop().create_datagram_endpoint(
            lambda: QuicServer(
                configuration=self.config,
                create_protocol=protocol,
                session_ticket_fetcher=self.tickets.take,
                session_ticket_handler=self.tickets.add,
            ),
            sock=self.sock,
        )

    async def stop(self) -> None:
        """GOAWAY to every connection, a moment for it to leave, then CONNECTION_CLOSE H3_NO_ERROR."""
        for conn in list(self.open):
            conn.goaway()
        if self.open:
            await asyncio.sleep(0.1)
        for conn in list(self.open):
            conn.close_now()
        if self.server is not None:
            self.server.close()
