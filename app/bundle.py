"""The services one running application holds, built once at start by ``app.main``.

Route handlers receive this bundle by dependency injection (``svc: Services``) and
call the use cases on it; nothing else keeps global state.

It wires every area together (the platform's services, telephony, the diary,
notifications), so it stands above them all and below the web layer that serves it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from adapters.http_tools import HttpToolClient
from adapters.notify_sender import NotificationSender
from adapters.providers import ProviderClient
from adapters.speech.http import SpeechHttp
from app.config import BootConfig
from app.crypto import SecretBox
from app.diary.service import DiaryServices
from app.notify.targets import NotifyTargets
from app.notify.worker import OutboxWorker
from app.retention import Retention
from app.services.accounts import Accounts
from app.telephony.announce import Announcements
from app.telephony.compliance import Compliance
from app.telephony.conversation import LineConversations
from app.telephony.erasure import CallErasure
from app.services.agents import Agents
from app.services.api_keys import ApiKeys
from app.services.audit import AuditLog
from app.services.auth_changes import AuthChanges
from app.services.identity_cache import IdentityCache
from app.services.chats import Chats
from app.services.libraries import Libraries
from app.services.pipeline import Pipeline
from app.services.projects import Projects
from app.services.providers import Providers
from app.services.sessions import Sessions
from app.services.settings import Settings
from app.services.tool_offers import ToolOffers
from app.services.tools import HttpTools, ToolRegistry
from app.services.usage import Usage
from app.telephony.features import FeatureFlags
from app.telephony.listener_state import ListenerState
from app.telephony.service import Telephony
from app.telephony.speech_models import LineSpeechModels
from app.telephony.voice import CallVoice, configured_engines


@dataclass
class Services:
    boot: BootConfig
    box: SecretBox
    audit: AuditLog
    accounts: Accounts
    sessions: Sessions
    settings: Settings
    #: the one pooled HTTP client for every upstream model server of this process
    client: ProviderClient
    providers: Providers
    usage: Usage
    projects: Projects
    agents: Agents
    libraries: Libraries
    api_keys: ApiKeys
    #: change notices for keys and accounts, which keep the keys' identity cache true
    auth_changes: AuthChanges
    retention: Retention
    #: the HTTP client of administrators' HTTP tools (a pool of its own)
    http_tool_client: HttpToolClient
    tools: ToolRegistry
    http_tools: HttpTools
    #: which HTTP tools each account may attach: the administrators' offers
    tool_offers: ToolOffers
    pipeline: Pipeline
    chats: Chats
    #: per-account overrides of the features.* flags
    features: FeatureFlags
    #: telephone lines: settings, lines, signalling, readiness, call log, tickets
    telephony: Telephony
    #: the diary, appointments, screening list and enquiries, and their call tools
    diary: DiaryServices
    #: the voice side of answered calls, over both transports
    call_voice: CallVoice
    #: outward notifications: the sender (its own pool), the targets, the outbox worker
    notify_sender: NotificationSender
    notify_targets: NotifyTargets
    outbox_worker: OutboxWorker
    #: a call's recording and transcript: playing and erasing; the compliance view
    call_erasure: CallErasure
    compliance: Compliance
    #: operators talking to a line's agent in text, under the rules of a call
    line_conversations: LineConversations
    #: each line's language model for the local recogniser
    speech_models: LineSpeechModels
    #: the pooled connections of calls to remote speech engines (app.telephony.speech_engines)
    speech_http: SpeechHttp = field(default_factory=SpeechHttp)

    @classmethod
    def build(cls, boot: BootConfig) -> "Services":
        box = SecretBox(boot["message_encryption_key"])
        audit = AuditLog()
        auth_changes = AuthChanges(IdentityCache())
        client = ProviderClient()
        providers = Providers(box, audit, client)
        settings = Settings(boot, box, audit)
        usage = Usage()
        libraries = Libraries(audit)
        http_tool_client = HttpToolClient()
        tools = ToolRegistry(box, http_tool_client, allow_hosts=settings.egress_allow_hosts)
        tool_offers = ToolOffers(audit, tools)
        diary = DiaryServices(audit)
        diary.register_tools(tools)
        # a call's "tomorrow" is the diary's tomorrow
        pipeline = Pipeline(providers, client, usage, tools, libraries, clock=diary.clock)
        features = FeatureFlags(settings, audit)
        chats = Chats(pipeline)
        telephony = Telephony(settings, box, audit, features, ListenerState())
        speech_http = SpeechHttp()
        speech_models = LineSpeechModels(boot.data_dir / "speech-models", tools, settings)
        call_voice = CallVoice(settings, telephony.calls, telephony.tickets, pipeline, chats,
                               telephony.surface_open, boot["storage.recordings_dir"],
                               configured_engines(settings, box, speech_http),
                               running=telephony.leases.running, speech_models=speech_models)
        announcements = Announcements(chats, boot["server.public_url"])
        telephony.calls.on_end = telephony.leases.on_end = announcements.call_ended
        notify_sender = NotificationSender()
        return cls(
            boot=boot,
            box=box,
            audit=audit,
            accounts=Accounts(audit, auth_changes),
            sessions=Sessions(),
            settings=settings,
            client=client,
            providers=providers,
            usage=usage,
            projects=Projects(audit),
            agents=Agents(audit, providers, tool_offers),
            libraries=libraries,
            api_keys=ApiKeys(audit, auth_changes),
            auth_changes=auth_changes,
            retention=Retention(settings, audit, boot["storage.recordings_dir"]),
            http_tool_client=http_tool_client,
            tools=tools,
            http_tools=HttpTools(box, audit, tools),
            tool_offers=tool_offers,
            pipeline=pipeline,
            chats=chats,
            features=features,
            telephony=telephony,
            diary=diary,
            call_voice=call_voice,
            speech_http=speech_http,
            speech_models=speech_models,
            notify_sender=notify_sender,
            notify_targets=NotifyTargets(settings, box, audit, notify_sender),
            outbox_worker=OutboxWorker(settings, box, notify_sender),
            call_erasure=CallErasure(audit, boot["storage.recordings_dir"]),
            compliance=Compliance(settings),
            line_conversations=LineConversations(settings, features, pipeline, chats, audit),
        )

    async def aclose(self) -> None:
        """At stop: let pending usage writes land, then close the upstream pool."""
        await self.usage.drain()
        await self.client.aclose()
        await self.http_tool_client.aclose()
        await self.speech_http.aclose()
        await self.notify_sender.aclose()

    @property
    def max_body_bytes(self) -> int:
        return self.boot["server.max_body_bytes"]
