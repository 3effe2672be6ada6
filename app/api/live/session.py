"""A recipient's session on a table: its catch-up, then its place in the table's feed."""

from __future__ import annotations

from typing import Any

from app.api.edge.access import SESSION
from app.api.live import client_out
from app.api.live.audiences import Feed, Feeds, Member
from app.api.live.client_in import answer, move
from app.api.live.frames import Frames
from app.api.live.messages import MoveMessage
from app.api.live.parking import Parking
from app.api.live.socket import Socket
from app.logs import annotate
from app.service.pipeline import TableService
from app.service.rate_limits import Allowance
from app.settings import Settings
from app.table.commands import Actor, seat_of
from app.table.model import Loaded, StoredEvent


class TableStream:
    """One recipient's session on a table: its catch-up, then its place in the table's feed
    (``app.api.live.audiences``), which sends it the live events; client moves and pings here."""

    __slots__ = ("actor", "feeds", "frames", "service", "settings", "socket", "table_id", "token")

    def __init__(
        self,
        socket: Socket,
        service: TableService,
        settings: Settings,
        table_id: str,
        actor: Actor | None,
        *,
        token: str | None = None,
    ) -> None:
        self.socket = socket
        self.service = service
        self.settings = settings
        self.table_id = table_id
        self.actor = actor
        self.token = token  # the hash of the token the socket was opened with
        app = socket.websocket.app
        # Shared with every socket of this process: each message rendered once per audience.
        self.frames: Frames = app.state.frames
        self.feeds: Feeds = feeds_of(app)

    async def stream(self, since: int | None) -> None:
        """Join the table's feed, catch up, then answer the client until it leaves."""
        player_id = self.actor.player_id if self.actor else None
        notes = None if player_id is None else self.service.hub.player(player_id)
        member = Member(self.socket, self.actor, notes, self.token)
        try:
            while True:
                # Joined before the store is read, so nothing falls between the two.
                feed = self.feeds.join(self.table_id, member)
                if await self._catch_up(feed, member, since):
                    break
                self.feeds.leave(member)  # too far behind meanwhile: a full view
                member = Member(self.socket, self.actor, notes, self.token)
                since = None
            if member.seat is None and self._park(member):
                # Served below ASGI from now on (app.api.live.parking); the feed closes its notes
                # when it leaves.
                notes = None
                return
            # Only now are the client's messages read: they are answered after the view.
            await self.receive()
        except BaseException:
            self.feeds.leave(member)
            raise
        else:
            self.feeds.leave(member)
        finally:
            if notes is not None:
                notes.close()

    def _park(self, member: Member) -> bool:
        """Serve this live spectator (no seat, with or without a player) below ASGI
        (``app.api.live.parking``), where the server allows it and the socket is idle; False: it
        stays as it is."""
        socket = self.socket
        wire = socket.wire
        if not self.settings.ws_park_spectators or wire is None or not socket.idle():
            return False
        session = socket.websocket.scope.get("extensions", {}).get(SESSION)
        if session is None:
            return False
        parking = parking_of(socket.websocket.app)
        watching = Watching(member, self.table_id, self.service, self.feeds)
        parked = wire.detach(lambda detached: parking.park(detached, watching, session))
        if parked is None:
            return False
        member.outbox = member.direct = parked  # the feed writes shared frames to it itself
        if member.feed is not None:
            member.feed.parked(member)
        session.detach(socket.websocket.scope)
        socket.stop()
        return True

    async def _catch_up(self, feed: Feed, member: Member, since: int | None) -> bool:
        loaded = await feed.snapshot()
        member.seat = seat_of(loaded, self.actor)
        annotate(seat=member.seat)
        backlog = None if since is None else await self._backlog(loaded, since)
        if since is not None and backlog is not None:
            member.last = since
            for stored in backlog:
                member.give(stored, self.frames)
        else:
            self.socket.offer(self.frames.view(self.service, loaded, self.actor))
            member.last = loaded.table.last_seq
        state = loaded.state
        if (
            member.seat is not None
            and state is not None
            and state.status == "playing"
            and state.hand.phase != "over"
            and state.hand.turn == member.seat
        ):
            self.socket.offer(
                client_out.your_turn(self.table_id, state.hand.number, state.hand.phase)
            )
        return await feed.go_live(member)

    async def _backlog(self, loaded: Loaded, since: int) -> list[StoredEvent] | None:
        """Events after ``since`` when they can be resumed; None when only a view will do."""
        head = loaded.table.last_seq
        limit = self.settings.ws_resume_limit
        if since > head or head - since > limit:
            return None
        backlog = await self.service.log_since(self.table_id, since, limit + 1)
        if len(backlog) > limit or any(
            s.match_number != loaded.table.match_number for s in backlog if s.seq <= head
        ):
            return None
        return backlog

    async def receive(self) -> None:
        """Answer the client's pings and submit its moves through the pipeline."""
        await self.socket.receive(self._move)

    async def _move(self, message: MoveMessage) -> str:
        return await move(self.service, self.table_id, self.actor, message, self.token)


class Watching:
    """A parked spectator's tenant (``app.api.live.parking``): its member of the table's feed.
    Its messages are answered as through ASGI: a move goes through the pipeline as the
    member's (a watcher who took a seat meanwhile plays), or is refused to a spectator."""

    __slots__ = ("feeds", "member", "service", "table_id")

    def __init__(self, member: Member, table_id: str, service: TableService, feeds: Feeds) -> None:
        self.member = member
        self.table_id = table_id
        self.service = service
        self.feeds = feeds

    async def answer(self, allowance: Allowance | None, raw: str | bytes) -> str:
        return await answer(raw, allowance, self._move)

    async def _move(self, message: MoveMessage) -> str:
        member = self.member
        return await move(self.service, self.table_id, member.actor, message, member.token)

    def leave(self) -> None:
        self.feeds.leave(self.member)


def parking_of(app: Any) -> Parking:
    """This process's parked sockets, made on first use."""
    parking: Parking | None = getattr(app.state, "parking", None)
    if parking is None:
        parking = app.state.parking = Parking(app.state.settings.ws_send_queue)
    return parking


def feeds_of(app: Any) -> Feeds:
    """This process's table feeds, made on first use."""
    feeds: Feeds | None = getattr(app.state, "feeds", None)
    if feeds is None:
        feeds = app.state.feeds = Feeds(app.state.service, app.state.settings, app.state.frames)
    return feeds
