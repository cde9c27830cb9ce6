"""The one dispatch path: one frame in, its answer frame out (or None: deliberately nothing).

`Dispatcher.dispatch(raw, flight)` is what `rmh serve` calls for every frame it reads and
what the JSON-RPC 2.0 spec tests call directly. It does no I/O; its only state is the
`InFlight` registry it is given (a fresh one by default, which makes it a pure function of
the frame apart from the methods it calls). Contract:
- a frame that is not JSON, not UTF-8, or an empty batch is answered with one error, id null;
- a response object (this server sends no requests) is logged and answered by nothing;
- each element of a batch is validated and answered on its own (`rpc.messages`); elements run
  concurrently and the batch answer keeps their order; notifications are never answered, and
  a frame of only notifications gets None;
- a request whose id is already in flight (in an earlier frame, or earlier in the same batch)
  is refused with -32600 echoing the id, reason "duplicate id in flight"; the first one runs;
- `$/cancelRequest {"id"}` cancels a request in flight, which is answered -32800 (a request
  form of it gets result null); MCP `notifications/cancelled {"requestId"}` cancels one that
  is then not answered, as MCP asks, unless it is an element of a batch: a batch's array
  answers each of its requests (JSON-RPC 2.0 section 6), so it holds -32800 for it. Sent with
  an id, `notifications/cancelled` (like every `notifications/*` method) is a request for a
  method that exists only as a notification: -32601, and nothing is cancelled or run (as the
  official MCP SDK does); after
  `InFlight.close()` requests are answered -32091;
- ordinary methods wait for a slot of `flight`; `control` methods (cheap: `ping`, `status`)
  and unknown methods never wait, so they are answered ahead of queued work;
- `refresh` (when given) is awaited before each frame's requests run, and may `replace` the
  method table (a server that could not serve yet and now can: `rmh serve` once an erasure
  another process left pending is finished);
- method errors follow `rpc.calls`; a bug outside a method's call (binding, encoding its
  result, claiming its id) is -32603 for that element's id alone: its batch's other elements
  are answered as ever, a notification never (it was one -32603 with id null for the whole
  frame: FIX35, session 35);
- the answer frame is at most `max_frame` bytes: the
  largest responses of an oversize answer become `response_too_large` errors for their ids
  until it fits (for a method of `oversize`, a success holding the result it makes for the
  limit instead: MCP's `tools/call` answers an `isError` result the model can read, not a
  protocol error), and a result that is not JSON becomes -32603 for its id. A batch's responses
  are encoded as they come and the largest refused as soon as the array would pass the cap,
  so a batch holds about `max_frame` of answers, not all of them (`Answers`).
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import Any

import anyio
import anyio.lowlevel

from .calls import AsyncMethod, ExceptionMapper, call_method, no_mapping
from .errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    REQUEST_CANCELLED,
    RpcError,
    application_error,
    spec_error,
)
from .flight import InFlight, Running
from .framing import DEFAULT_MAX_FRAME, encode
from .messages import (
    NO_ID,
    Invalid,
    Parsed,
    Request,
    Stray,
    failure,
    parse_frame,
    success,
    valid_id,
)

log = logging.getLogger("rpc")

CANCEL_METHODS = frozenset({"$/cancelRequest", "notifications/cancelled"})
MCP_CANCEL = "notifications/cancelled"
# MCP's cancel sent with an id: it cancelled the request it named, which then got no answer
# (MCP's rule for the notification), while the cancel itself was answered `result: null`, so
# a client that sent it as a request was told it succeeded and then waited for ever for the
# other answer (MCPRPC2, session 29; PROTO3, session 30). The official SDK answers it -32601.
CANCEL_AS_REQUEST = {"method": MCP_CANCEL, "reason": (
    "a notification: send it without an id; nothing was cancelled")}
# Every other MCP notification (`notifications/initialized`, `/progress`, `/roots/list_changed`,
# ...) sent with an id is a request for a method that exists only as a notification, -32601
# as the official SDK answers it (no request handler has its name); `notifications/initialized`
# with an id was run and answered `result: null` (PROTO4, session 30).
NOTIFICATION_PREFIX = "notifications/"


def notification_as_request(method: str) -> dict[str, str]:
    """-32601's data for a request named like an MCP notification."""
    if method == MCP_CANCEL:
        return CANCEL_AS_REQUEST
    return {"method": method[:200], "reason": "a notification: send it without an id"}
# The result a method answers, for the frame limit, when its own result is over it.
Oversize = Callable[[int], Any]


class Dispatcher:
    """A method table with its exception map, control methods and answer cap."""

    def __init__(
        self,
        methods: Mapping[str, AsyncMethod],
        *,
        map_exception: ExceptionMapper = no_mapping,
        max_frame: int = DEFAULT_MAX_FRAME,
        control: Collection[str] = (),
        refresh: Callable[[], Awaitable[None]] | None = None,
        oversize: Mapping[str, Oversize] | None = None,
    ) -> None:
        self.max_frame = max_frame
        self.oversize = dict(oversize or {})
        self.control = frozenset(control)
        self._methods = dict(methods)
        self._map_exception = map_exception
        self._refresh = refresh

    def replace(self, methods: Mapping[str, AsyncMethod]) -> None:
        """Serve `methods` from the next request on (one already running finishes as it is)."""
        self._methods = dict(methods)

    async def dispatch(self, raw: bytes, flight: InFlight | None = None) -> bytes | None:
        """One whole frame (no newline) in, its answer frame out; None: nothing to answer.
        The answer is counted in `flight.unwritten` from the moment its parts are made, and in
        `flight.ready` once whole, until the caller says it was written
        (`flight.answer_written(len(answer))`)."""
        parsed = parse_frame(raw)
        flight = InFlight() if flight is None else flight
        if parsed.error is not None:
            out = encode(failure(None, parsed.error))
            flight.answer_waiting(len(out))
            flight.answer_ready(len(out))
            return out
        if self._refresh is not None:
            await self._refresh()
        results = Answers(len(parsed.items), self.max_frame, batch=parsed.is_batch,
                          flight=flight, oversize=self.oversize)
        try:
            return await self._dispatch(parsed, flight, results)
        except BaseException:
            results.abandon()
            raise

    async def _dispatch(self, parsed: Parsed, flight: InFlight, results: Answers) -> bytes | None:
        jobs: list[tuple[int, Request, Running]] = []
        # Every id is claimed here, in order, before anything awaits: no race, no reordering.
        for i, item in enumerate(parsed.items):
            try:
                self._claim(i, item, flight, results, jobs)
            except Exception:  # a bug costs this element's answer alone (FIX35, session 35)
                log.exception("request not dispatched")
                if isinstance(item, (Request, Invalid)) and item.id is not NO_ID:
                    results.add(i, failure(item.id, spec_error(INTERNAL_ERROR)))

        async def job(i: int, request: Request, entry: Running) -> None:
            try:
                response = await self._run(request, entry, flight, parsed.is_batch)
            except Exception:  # one element's bug never takes its siblings' answers with it
                log.exception("method %s failed outside its call", request.method[:200])
                response = None if request.is_notification else failure(
                    request.id, spec_error(INTERNAL_ERROR))
            if response is not None:
                results.add(i, response, request.method)

        async with anyio.create_task_group() as tg:
            for i, request, entry in jobs:
                tg.start_soon(job, i, request, entry)
        return results.frame()

    def _claim(self, i: int, item: Request | Invalid | Stray, flight: InFlight,
               results: Answers, jobs: list[tuple[int, Request, Running]]) -> None:
        """Answer element `i` at once (an invalid one, a cancel, a refused id) or add it to
        `jobs` with its claimed id."""
        if isinstance(item, Stray):  # a response to no request of ours: nothing to say
            log.warning("a response (id %s) to no request of ours: dropped",
                        str(item.id)[:40])
        elif isinstance(item, Invalid) and item.id is NO_ID:
            log.warning("a notification not run: %s", item.error.data)
        elif isinstance(item, Invalid):
            results.add(i, failure(item.id, item.error))
        elif item.method.startswith(NOTIFICATION_PREFIX) and not item.is_notification:
            data = notification_as_request(item.method)
            results.add(i, failure(item.id, spec_error(METHOD_NOT_FOUND, data)))
        elif item.method in CANCEL_METHODS:
            _cancel(flight, item)
            if not item.is_notification:
                results.add(i, success(item.id, None))
        elif item.is_notification:
            jobs.append((i, item, flight.track_notification()))
        else:
            entry = flight.claim(item.id)
            if entry is None:
                reason = {"reason": "duplicate id in flight"}
                results.add(i, failure(item.id, spec_error(INVALID_REQUEST, reason)))
            else:
                jobs.append((i, item, entry))

    async def _run(
        self, request: Request, entry: Running, flight: InFlight, in_batch: bool
    ) -> dict[str, Any] | None:
        """Run one request under its own cancel scope; its response (None: no answer). A
        batch element cancelled by MCP's notification is answered -32800 all the same: the
        batch's array is sent for its other elements anyway, and a batch of a request and a
        cancel of it got no answer at all, which a client cannot tell from a lost frame."""
        stopped: dict[str, Any] | None = None
        try:
            with entry.scope:
                await anyio.lowlevel.checkpoint()  # honours a cancel from before the start
                if request.method in self.control or request.method not in self._methods:
                    return await self._answer(request)
                async with flight.slot():
                    response = await self._answer(request)
                stopped = _stopped(response) if entry.scope.cancel_called else None
                if stopped is None:
                    return response
            if request.is_notification:
                return None
            if entry.shutting_down:
                return failure(request.id, application_error("server_shutting_down", stopped))
            if entry.answer_cancel or in_batch:
                return failure(request.id, spec_error(REQUEST_CANCELLED, stopped))
            return None
        finally:
            flight.release(entry)

    async def _answer(self, request: Request) -> dict[str, Any] | None:
        try:
            result = await call_method(
                self._methods, request.method, request.params, self._map_exception
            )
        except RpcError as error:
            return None if request.is_notification else failure(request.id, error)
        return None if request.is_notification else success(request.id, result)

    def render(self, responses: list[dict[str, Any]], *, batch: bool) -> bytes:
        """Encode responses as one frame of at most `max_frame` bytes (see `Answers`)."""
        answers = Answers(len(responses), self.max_frame, batch=batch, oversize=self.oversize)
        for i, response in enumerate(responses):
            answers.add(i, response)
        out = answers.frame()
        assert out is not None
        return out


def _stopped(response: dict[str, Any] | None) -> dict[str, Any] | None:
    """The `data` of an error saying a change stopped at the cancel, what landed named
    (`vault.IngestStopped`: kind "cancelled", `stopped`), less its kind: the cancel's own
    error (-32800, -32091) answers, with it. None for any other response."""
    error = (response or {}).get("error")
    data = error.get("data") if isinstance(error, dict) else None
    if not (isinstance(data, dict) and data.get("kind") == "cancelled" and data.get("stopped")):
        return None
    return {k: v for k, v in data.items() if k != "kind"}


class Answers:
    """The responses of one frame, encoded as they come, never much over `max_frame` bytes.

    A response over the cap becomes a `response_too_large` error for its id; in a batch, the
    largest responses (the first of equal ones) are replaced so, as soon as the array would
    pass the cap, until it fits again: what is kept is what refusing the largest of all the
    responses at the end would keep, without holding them all. Should even the errors not fit
    (a huge batch of tiny requests), the answer is one such error with id null. (An error
    itself is sent whatever the cap: it is small, and a cap below a few hundred bytes is only
    ever a test's.)"""

    def __init__(self, size: int, max_frame: int, *, batch: bool,
                 flight: InFlight | None = None,
                 oversize: Mapping[str, Oversize] | None = None) -> None:
        self.max_frame, self.batch = max_frame, batch
        self._oversize = oversize or {}
        self._methods: list[str | None] = [None] * size
        self._flight = InFlight() if flight is None else flight
        self._counted = 0  # bytes told to `flight.answer_waiting` so far
        self._frames: list[bytes | None] = [None] * size
        self._ids: list[Any] = [None] * size
        self._kept: list[tuple[int, int]] = []  # heap of (-length, index) not yet refused
        # the answer's bytes: a batch's array is its frames without their newlines, a comma
        # between two, the brackets and one newline
        self._total = 2 if batch else 0

    def add(self, i: int, response: dict[str, Any], method: str | None = None) -> None:
        frame = _encode_one(response)
        before = self._total
        self._frames[i], self._ids[i], self._methods[i] = frame, response.get("id"), method
        self._total += len(frame)
        heapq.heappush(self._kept, (-len(frame), i))
        while self._total > self.max_frame and self._kept:
            _, largest = heapq.heappop(self._kept)
            old = self._frames[largest]
            smaller = self._refusal(self._ids[largest], self._methods[largest])
            if old is not None and len(smaller) < len(old):
                self._total += len(smaller) - len(old)
                self._frames[largest] = smaller
        self._count(self._total - before)  # before anything awaits: no slot opens uncounted

    def _count(self, size: int) -> None:
        self._counted += size
        self._flight.answer_waiting(size)

    def abandon(self) -> None:
        """No answer will be written after all (a bug or a cancel): uncount what was made."""
        self._count(-self._counted)

    def _refusal(self, rid: Any, method: str | None = None) -> bytes:
        if method is not None and (instead := self._oversize.get(method)) is not None:
            return encode(success(rid, instead(self.max_frame)))
        too_large = application_error("response_too_large", {"limit": self.max_frame})
        return encode(failure(rid, too_large))

    def frame(self) -> bytes | None:
        """The answer frame; None when no response was added (only notifications)."""
        out = self._join()
        self._count((0 if out is None else len(out)) - self._counted)
        if out is not None:
            self._flight.answer_ready(len(out))
        return out

    def _join(self) -> bytes | None:
        frames = [f for f in self._frames if f is not None]
        if not frames:
            return None
        if not self.batch:
            return frames[0]
        if self._total > self.max_frame:
            return self._refusal(None)
        return b"[" + b",".join(f[:-1] for f in frames) + b"]\n"


def _cancel(flight: InFlight, request: Request) -> None:
    """Cancel the request the params name; params that name none cancel nothing (ADVRPC,
    session 27: a missing `id`/`requestId` was read as null, so `{}` cancelled a request in
    flight with id null), nor does a value no request can have as its id (an array, an
    object, a boolean): an array nested to the decoder's limit, read whole, was re-encoded
    to be looked up and overflowed the stack, so the cancel was answered -32603 with id null,
    a notification answered, a request's answer under no id (API8, session 34)."""
    mcp = request.method == MCP_CANCEL
    key = "requestId" if mcp else "id"
    if isinstance(request.params, dict) and key in request.params:
        target = request.params[key]
        if valid_id(target):
            flight.cancel(target, answer=not mcp)


def _encode_one(response: dict[str, Any]) -> bytes:
    """One response as a frame; a result that is not JSON becomes -32603 for its id."""
    try:
        return encode(response)
    except Exception:  # not JSON (TypeError, ValueError, RecursionError) or a result that
        # fails as it is read (a mapping changed meanwhile, a broken `items`): its id alone
        log.exception("response not JSON-serialisable")
        # ids are validated on the way in (finite numbers, strings, null): this one encodes
        return encode(failure(response.get("id"), spec_error(INTERNAL_ERROR)))
