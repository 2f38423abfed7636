"""AgeVerify settings: every knob is read from the environment here (and gunicorn's worker count in
gunicorn.conf.py), through the typed reader of ageverify/env.py, which names the variable and the form it
expects when a value is wrong. docs/configuration.md is written from these reads
(`scripts/reference_docs.py`): the meaning given to each is what the reference says.

Development defaults are safe to run on a laptop (SQLite, a filesystem broker); with DEBUG off a
missing secret is a loud start-up failure, never a silent default.
"""

from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
import redis.backoff
import redis.retry

from ageverify.env import DEVELOPMENT, ENV, SET, ConfigurationError, refuse_weak_secret

BASE_DIR = Path(__file__).resolve().parent.parent

ENV.section = "Core"
DEBUG = ENV.flag(
    "DEBUG",
    False,
    "development mode; with it off, `SECRET_KEY` and `FLOW_SIGNING_KEY` are required and no secret may keep an "
    "example's placeholder (`change-me`)",
    production=DEVELOPMENT,
)
SECRET_KEY = ENV.secret(
    "SECRET_KEY",
    debug=DEBUG,
    dev_default="dev-only-secret-key-not-for-production",
    meaning="Django's signing key (cookies, CSRF)",
    production=SET,
    example="change-me-long-random",
)
# Signs the hosted flow link (CONTRACT 1: `signature`); distinct from SECRET_KEY so either can rotate alone.
FLOW_SIGNING_KEY = ENV.secret(
    "FLOW_SIGNING_KEY",
    debug=DEBUG,
    dev_default="dev-only-flow-signing-key",
    meaning="HMAC key of the session `signature` and flow link",
    production=SET,
    example="change-me-long-random",
)
ALLOWED_HOSTS = ENV.items(
    "ALLOWED_HOSTS",
    "localhost,127.0.0.1,[::1],testserver",
    "the host names the service answers to",
    production=SET,
    example="verify.example.com",
)
CSRF_TRUSTED_ORIGINS = ENV.items(
    "CSRF_TRUSTED_ORIGINS",
    "",
    "origins when served behind a proxy",
    production=SET,
    example="https://verify.example.com",
)
PUBLIC_BASE_URL = ENV.url(
    "PUBLIC_BASE_URL",
    "http://localhost:8000",
    "absolute base of `verificationUrl` and dashboard links; the origin wallets bind to (Digital ID)",
    production=SET,
    example="https://verify.example.com",
).rstrip("/")
VAR_DIR = Path(
    ENV.text(
        "AGEVERIFY_VAR_DIR",
        str(BASE_DIR / "var"),
        "the one folder the service writes to: the demo's SQLite database and broker, the demo's keys, the local "
        "webhook receiver's certificates",
        shown="`var/` in the checkout",
        example="/srv/ageverify/var",
    )
)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "tenants",
    "webhooks",
    "sessions_api",
    "wallets",
    "age_passes",
    "flow",
    "dashboard",
    "pipeline",
    "assurance",
]

MIDDLEWARE = [
    # Outermost, so that every answer gets the security headers, problems made by the middleware below included.
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "dashboard.middleware.ContentSecurityPolicyMiddleware",
    "sessions_api.api.middleware.RequestIdMiddleware",
    "sessions_api.api.middleware.ApiProblemMiddleware",
    "sessions_api.api.middleware.ChunkedBodyMiddleware",
    # Serves the flow's, dashboard's and API docs' own assets in production too (no CDN, no extra server).
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The flow's pages (and their error pages, CSRF failures included) in the user's language.
    "flow.language.FlowLanguageMiddleware",
    "django.middleware.common.CommonMiddleware",
    # Outside the CSRF middleware, so an embedded flow's CSRF cookie is made cross-site too.
    "flow.embedding.EmbeddedFlowMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]

ROOT_URLCONF = "ageverify.urls"
WSGI_APPLICATION = "ageverify.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "flow.embedding.flow_channel",
            ],
        },
    },
]

ENV.section = "Database"


def _database_url(raw: str) -> dict:
    return dj_database_url.parse(raw.strip())  # its errors (an unknown scheme, a bad port) are ValueErrors


DATABASES = {
    "default": ENV.read(
        "DATABASE_URL",
        None,
        "e.g. `postgres://user@host:5432/ageverify` (psycopg 3)",
        parse=_database_url,
        form="a database URL such as postgres://user@host:5432/ageverify",
        shown="`sqlite:///var/ageverify.sqlite3`",
        production=SET,
        example="postgres://ageverify@127.0.0.1:5432/ageverify",
    )
    or dj_database_url.parse(f"sqlite:///{VAR_DIR / 'ageverify.sqlite3'}")
}
if DATABASES["default"].get("PASSWORD") and not DEBUG:  # compose.yaml builds it from POSTGRES_PASSWORD
    refuse_weak_secret("DATABASE_URL", DATABASES["default"]["PASSWORD"], part="password")
DATABASES["default"]["CONN_MAX_AGE"] = ENV.integer(
    "DATABASE_CONN_MAX_AGE",
    60,
    "seconds a process keeps its database connection (and its prepared statements) before opening a new one",
)
# Django's cursors bind on the client and are never prepared; this only lets tenants.hot_sql run the
# API's hot queries as prepared statements (Django leaves psycopg's preparation off by default).
# Off (DATABASE_PREPARED_STATEMENTS=0) behind a pooler that cannot keep them (PgBouncer before 1.21).
DATABASE_PREPARED_STATEMENTS = ENV.flag(
    "DATABASE_PREPARED_STATEMENTS",
    True,
    "the API's hot queries as prepared statements; set `0` behind a pooler that cannot keep them "
    "(PgBouncer before 1.21)",
)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"].setdefault("OPTIONS", {})["connect_timeout"] = 5
    DATABASES["default"]["OPTIONS"]["prepare_threshold"] = 5 if DATABASE_PREPARED_STATEMENTS else None
# A process's threads share at most this many connections (psycopg's pool, through Django); a connection goes back
# to the pool at the end of each request or task, and a webhook attempt gives it back while it waits on the
# receiver (webhooks.delivery). For the webhooks worker, whose 32 threads would otherwise keep 32 idle connections.
DATABASE_POOL_MAX_SIZE = ENV.integer(
    "DATABASE_POOL_MAX_SIZE",
    0,
    "most database connections a process's threads share (a connection pool); `0`: no pool, each thread keeps its "
    "own connection for `DATABASE_CONN_MAX_AGE` (the deployed webhooks worker sets 8)",
)
if DATABASE_POOL_MAX_SIZE and DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"]["CONN_MAX_AGE"] = 0  # a pooled connection is kept by the pool, not by a thread
    DATABASES["default"]["OPTIONS"]["pool"] = {
        "min_size": 1,
        "max_size": DATABASE_POOL_MAX_SIZE,
        "max_idle": 60,  # connections above min_size unused this long are closed
        # A thread waits this long for a free connection, then its task fails (the sweep queues the delivery again).
        "timeout": 30,
    }
# A reused connection is checked before its first query of each request or task (workers call
# close_old_connections around every task), so a PostgreSQL restart costs no request and no task.
# With the pool, the pool checks a connection when it hands it out.
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Off: a session's creation commits without waiting for the WAL flush (PostgreSQL only), as webhook
# attempts do; a database crash within about 0.6 s of a 201 may undo that creation (docs/integration-api.md,
# "API behaviour in brief"). On: every creation waits for the disk, at about a tenth of POST's throughput.
SESSION_CREATE_WAIT_FOR_DISK = ENV.flag(
    "SESSION_CREATE_WAIT_FOR_DISK",
    False,
    "on: a session's creation answers only once its commit is on disk; off: the commit does not wait for "
    "PostgreSQL's flush, so a database crash within about 0.6 s may undo a creation (see \"API behaviour in "
    'brief")',
)

# Redis is the broker, the rate limiter's store and the cache. Without REDIS_URL (the embedded demo)
# Celery uses a filesystem broker shared by the web process and the worker, and the cache is local.
ENV.section = "Redis and Celery"
REDIS_URL = ENV.url(
    "REDIS_URL",
    "",
    "Celery broker, rate-limit store and cache, e.g. `redis://127.0.0.1:6379/0`",
    schemes=("redis", "rediss", "unix"),
    shown="empty: filesystem broker in `var/`",
    production=SET,
    example="redis://127.0.0.1:6379/0",
)
if urlsplit(REDIS_URL).password and not DEBUG:
    refuse_weak_secret("REDIS_URL", urlsplit(REDIS_URL).password, part="password")
# Every Redis call on the request path (rate limiter, cache, task publish) gives up after this many
# seconds, without retrying: a frozen Redis costs a request at most this, and the callers fail open
# (rate limit, sign-in throttle) or leave the work to a sweep (webhooks). redis-py retries 3 times by default.
REDIS_REQUEST_TIMEOUT = ENV.number(
    "REDIS_REQUEST_TIMEOUT",
    0.5,
    "seconds (connect and read, no retry) for every Redis call on the request path",
)
# After a Redis failure, request-path callers skip Redis for this long (tenants/redis_outage.py).
REDIS_OUTAGE_BACKOFF_SECONDS = ENV.number(
    "REDIS_OUTAGE_BACKOFF_SECONDS",
    5,
    "after a Redis failure, the rate limiter and webhook publish skip Redis this long",
)
REDIS_REQUEST_OPTIONS = {
    "socket_connect_timeout": REDIS_REQUEST_TIMEOUT,
    "socket_timeout": REDIS_REQUEST_TIMEOUT,
    "retry": redis.retry.Retry(redis.backoff.NoBackoff(), 0),
}
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": REDIS_REQUEST_OPTIONS,
        }
    }
else:
    BROKER_DIR = VAR_DIR / "broker"
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR),
        "data_folder_out": str(BROKER_DIR),
        "control_folder": str(VAR_DIR / "broker-control"),
    }
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
CELERY_TASK_IGNORE_RESULT = True
# Two queues, each with its own workers: `analysis` (CPU: selfies and documents) and `webhooks`
# (I/O: delivery attempts, and the periodic chores), so a hanging receiver delays no user's decision.
CELERY_TASK_QUEUES = {"analysis": {"routing_key": "analysis"}, "webhooks": {"routing_key": "webhooks"}}
CELERY_TASK_DEFAULT_QUEUE = "webhooks"
CELERY_TASK_ROUTES = {
    "sessions_api.tasks.selfie_analyse": {"queue": "analysis"},
    "sessions_api.tasks.document_analyse": {"queue": "analysis"},
}
# Acknowledged when done, not when received: a worker killed mid-task leaves its message unacknowledged,
# and Redis hands it to a worker again after the visibility timeout (the state machine makes a second
# run harmless). The timeout must exceed the longest task and the longest countdown (60 s, webhook retries).
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
BROKER_VISIBILITY_TIMEOUT = ENV.integer(
    "BROKER_VISIBILITY_TIMEOUT",
    300,
    "seconds after which the task of a worker that died is handed out again",
    minimum=1,
)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A publish must fail fast when the broker is down or frozen: the outbox sweep re-queues later.
CELERY_BROKER_CONNECTION_TIMEOUT = REDIS_REQUEST_TIMEOUT
CELERY_BROKER_TRANSPORT_OPTIONS = {
    **globals().get("CELERY_BROKER_TRANSPORT_OPTIONS", {}),
    # One connection attempt per publish, no retry loop with waits in between.
    "max_retries": 0,
    "socket_connect_timeout": REDIS_REQUEST_TIMEOUT,
    "socket_timeout": REDIS_REQUEST_TIMEOUT,
    "visibility_timeout": BROKER_VISIBILITY_TIMEOUT,
    # How often a worker looks for messages whose worker died (unacknowledged past the visibility timeout).
    "unacked_restore_interval": ENV.integer(
        "BROKER_UNACKED_RESTORE_INTERVAL",
        10,
        "seconds between a worker's looks for messages whose worker died (unacknowledged past the visibility timeout)",
        minimum=1,
    ),
}
# The worker's own broker connection waits longer than a request would (see ageverify/celery.py).
CELERY_WORKER_BROKER_SOCKET_TIMEOUT = 5
CELERY_TASK_PUBLISH_RETRY = False
# Survives a broker loss while a task runs (Celery 5.7.0 exits; see ageverify/worker.py). A task that
# is running when the broker goes away finishes (its webhook is sent) instead of being cancelled.
CELERY_WORKER_CONSUMER = "ageverify.worker:Consumer"
# An analysis worker's process loads its models as it starts (ageverify.celery), a few seconds on a busy host:
# the pool must not count it as failed to start after Celery's default 4 s.
CELERY_WORKER_PROC_ALIVE_TIMEOUT = 120
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
# Without this Celery's Django fixup opens a new database connection for every task (~10 ms each).
CELERY_DB_REUSE_MAX = 1000
CELERY_TASK_ALWAYS_EAGER = ENV.flag(
    "CELERY_TASK_ALWAYS_EAGER", False, "run tasks in-process (debugging only)", production=DEVELOPMENT
)
CELERY_BEAT_SCHEDULE = {
    "sessions-expire-due": {"task": "sessions_api.tasks.sessions_expire_due", "schedule": timedelta(seconds=30)},
    # Sessions left in processing by a lost or expired analysis message go back to their step.
    "stuck-analyses-release": {"task": "sessions_api.tasks.stuck_analyses_release", "schedule": timedelta(seconds=60)},
    # Analyses queued in a Redis that came back empty go back to their step within seconds (core.broker_epoch).
    "lost-analyses-release": {
        "task": "sessions_api.tasks.lost_analyses_release",
        "schedule": timedelta(seconds=5),
        "options": {"expires": 5},
    },
    # Also what takes over, within a tick, the deliveries queued in a Redis that came back empty.
    "webhooks-sweep-due": {"task": "webhooks.tasks.webhook_deliveries_sweep", "schedule": timedelta(seconds=5)},
    "idempotency-records-purge": {
        "task": "sessions_api.tasks.idempotency_records_purge",
        "schedule": timedelta(hours=1),
    },
    # Final sessions past their tenant's retention_days (sessions_api/retention.py).
    "final-sessions-purge": {"task": "sessions_api.tasks.final_sessions_purge", "schedule": timedelta(hours=1)},
    "age-passes-purge": {"task": "age_passes.tasks.age_passes_purge", "schedule": timedelta(hours=1)},
    # One heartbeat per queue: its age (GET /ops/pipeline) shows whether that queue's workers consume.
    **{
        f"worker-heartbeat-{queue}": {
            "task": "pipeline.tasks.worker_heartbeat",
            "schedule": timedelta(seconds=30),
            "args": (queue,),
            "options": {"queue": queue, "expires": 60},
        }
        for queue in CELERY_TASK_QUEUES
    },
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = True
# The hosted flow speaks these (flow/locale/, flow/language.py); the API, dashboard and admin stay in English.
LANGUAGES = [
    ("en", "English"),
    ("de", "German"),
    ("fr", "French"),
    ("es", "Spanish"),
    ("it", "Italian"),
    ("nl", "Dutch"),
    ("pl", "Polish"),
    ("pt", "Portuguese"),
    ("ar", "Arabic"),
]
# The flow's language choice (the `locale` of the start link, or the switch on every page) lives in this
# cookie, scoped to the flow.
LANGUAGE_COOKIE_NAME = "av_lang"
LANGUAGE_COOKIE_PATH = "/flow/"
LANGUAGE_COOKIE_AGE = 30 * 24 * 3600
LANGUAGE_COOKIE_HTTPONLY = True
LANGUAGE_COOKIE_SAMESITE = "Lax"
LANGUAGE_COOKIE_SECURE = not DEBUG
USE_TZ = True

STATIC_URL = "/static/"
# The documentation site, built from docs/ by `mkdocs build` (mkdocs.yml; scripts/setup-env.sh) and served at /docs/.
DOCS_SITE_DIR = BASE_DIR / ".docs-site"
STATIC_ROOT = VAR_DIR / "static"
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").is_dir() else []
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Without `collectstatic` (development, tests) WhiteNoise finds files through the finders instead.
WHITENOISE_USE_FINDERS = True

SESSION_COOKIE_SECURE = not DEBUG
CSRF_COOKIE_SECURE = not DEBUG
SESSION_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
# Browsers keep to HTTPS for a year once they saw this over HTTPS (Django sends it on secure requests only).
ENV.section = "Security"
SECURE_HSTS_SECONDS = ENV.integer(
    "SECURE_HSTS_SECONDS",
    0 if DEBUG else 365 * 24 * 3600,
    "`Strict-Transport-Security` on HTTPS answers",
    shown="`31536000` with DEBUG off",
    example=str(365 * 24 * 3600),
)
SECURE_HSTS_INCLUDE_SUBDOMAINS = ENV.flag(
    "SECURE_HSTS_INCLUDE_SUBDOMAINS", False, "add `includeSubDomains` to `Strict-Transport-Security`"
)
# Behind the TLS proxy (docs/operations.md): trust its X-Forwarded-Proto, or requests never look secure.
TRUST_X_FORWARDED_PROTO = ENV.flag(
    "TRUST_X_FORWARDED_PROTO",
    False,
    "set behind the TLS proxy, so requests count as HTTPS (HSTS, secure cookies)",
    production=SET,
    example="1",
)
if TRUST_X_FORWARDED_PROTO:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
X_FRAME_OPTIONS = "DENY"
# The hosted flow shows its own friendly page for a failed CSRF check; other paths keep Django's.
CSRF_FAILURE_VIEW = "flow.errors.csrf_failure"

# Tenant staff sign in at the dashboard; operators' /admin/ has its own login page.
LOGIN_URL = "/dashboard/login/"
LOGIN_REDIRECT_URL = "/dashboard/"

# Password reset mails carry a sign-in link: with DEBUG off they go by SMTP (EMAIL_HOST, ...), never to
# the console, which is the web process's log.
_CONSOLE_EMAIL = "django.core.mail.backends.console.EmailBackend"
ENV.section = "Email"
EMAIL_BACKEND = ENV.text(
    "EMAIL_BACKEND",
    _CONSOLE_EMAIL if DEBUG else "django.core.mail.backends.smtp.EmailBackend",
    "Django email backend (password reset mails); the console backend is refused with DEBUG off, as it would "
    "write reset links to the web log",
    shown="console with DEBUG, SMTP without",
    production=SET,
    example="django.core.mail.backends.smtp.EmailBackend",
)
if EMAIL_BACKEND == _CONSOLE_EMAIL and not DEBUG:
    raise ConfigurationError("EMAIL_BACKEND=console writes password reset links to the log; use SMTP when DEBUG is off")
EMAIL_HOST = ENV.text("EMAIL_HOST", "localhost", "the SMTP relay's host")
EMAIL_PORT = ENV.integer("EMAIL_PORT", 25, "the SMTP relay's port", minimum=1)
EMAIL_HOST_USER = ENV.text("EMAIL_HOST_USER", "", "the SMTP relay's user name")
EMAIL_HOST_PASSWORD = ENV.secret(
    "EMAIL_HOST_PASSWORD", debug=DEBUG, required=False, min_length=0, meaning="the SMTP relay's password"
)
EMAIL_USE_TLS = ENV.flag("EMAIL_USE_TLS", False, "STARTTLS to the SMTP relay")
EMAIL_TIMEOUT = 10
DEFAULT_FROM_EMAIL = ENV.text(
    "DEFAULT_FROM_EMAIL", "AgeVerify <no-reply@localhost>", "the sender of password reset mails"
)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["sessions_api.api.authentication.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["sessions_api.api.parsers.StrictJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "EXCEPTION_HANDLER": "sessions_api.api.problems.problem_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "AgeVerify API",
    "DESCRIPTION": (
        "Age verification sessions: create a session, send the user through the hosted flow, read the result."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # The sidecar's Redoc, served by sessions_api/api/redoc_bundle.py without its cdn.redoc.ly logo.
    "REDOC_DIST": "/v1/redoc-dist",
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": r"/v1",
    # 3.1 for its `webhooks`: the events AgeVerify sends, their payloads and headers.
    "OAS_VERSION": "3.1.0",
    "WEBHOOKS": [
        "sessions_api.api.webhook_schema.verification_completed",
        "sessions_api.api.webhook_schema.verification_redacted",
        "sessions_api.api.webhook_schema.verification_started",
        "sessions_api.api.webhook_schema.verification_requires_input",
        "sessions_api.api.webhook_schema.test_event",
    ],
}

# --- API limits (CONTRACT 2) ---
ENV.section = "API limits"
API_MAX_BODY_BYTES = 16 * 1024
_PER_TENANT = (
    "service-wide rate limit per tenant and mode (all of a tenant's live keys share one bucket, its test keys another)"
)
API_RATE_LIMIT_PER_SECOND = ENV.integer(
    "API_RATE_LIMIT_PER_SECOND", 100, "requests per second: " + _PER_TENANT, minimum=1
)
API_RATE_LIMIT_BURST = ENV.integer("API_RATE_LIMIT_BURST", 200, "requests at once: " + _PER_TENANT, minimum=1)
# Requests with a missing or invalid key, per client address (see DASHBOARD_LOGIN_TRUSTED_PROXIES).
API_UNAUTHENTICATED_RATE_PER_SECOND = ENV.number(
    "API_UNAUTHENTICATED_RATE_PER_SECOND",
    2,
    "requests per second with a missing or invalid key, per client address (then 429)",
)
API_UNAUTHENTICATED_BURST = ENV.integer(
    "API_UNAUTHENTICATED_BURST", 30, "requests at once with a missing or invalid key, per client address (then 429)"
)
# Sessions created from a browser or app with a publishable key (SDK mode, opt-in per key).
_CLIENT_SESSIONS = "sessions created from a browser or app with one publishable key (SDK mode, when the key allows it)"
CLIENT_SESSIONS_RATE_PER_KEY = ENV.number("CLIENT_SESSIONS_RATE_PER_KEY", 5, "per second: " + _CLIENT_SESSIONS)
CLIENT_SESSIONS_BURST_PER_KEY = ENV.integer("CLIENT_SESSIONS_BURST_PER_KEY", 30, "at once: " + _CLIENT_SESSIONS)
CLIENT_SESSIONS_RATE_PER_ADDRESS = ENV.number(
    "CLIENT_SESSIONS_RATE_PER_ADDRESS", 0.2, "per second: the same per client address, across all keys"
)
CLIENT_SESSIONS_BURST_PER_ADDRESS = ENV.integer(
    "CLIENT_SESSIONS_BURST_PER_ADDRESS", 10, "at once: the same per client address, across all keys"
)
IDEMPOTENCY_TTL = timedelta(hours=24)
# The calibrated age policy (sessions_api/age_policy.py); empty: the committed age_policy.json.
ENV.section = "Hosted flow"
AGE_POLICY_FILE = ENV.text(
    "AGE_POLICY_FILE",
    "",
    "the calibrated age policy to use",
    shown="`sessions_api/age_policy.json`",
    example="/etc/ageverify/age_policy.json",
)
# The two age readers that policy was calibrated for (checks/age_heads.py): their sha256 must be the one the policy
# records, or the service does not start. `manage.py calibrate_age_policy` writes both where these two point.
AGE_READERS_FILE = ENV.text(
    "AGE_READERS_FILE",
    "",
    "the age readers the policy was calibrated for (sha256 checked against the policy)",
    shown="`checks/models/age_heads.npz`",
    example="/etc/ageverify/age_readers.npz",
)
# Upload POSTs of the hosted flow (flow/upload_rate.py): per session, and per client address.
FLOW_UPLOAD_RATE_PER_SESSION = ENV.number(
    "FLOW_UPLOAD_RATE_PER_SESSION", 0.05, "upload POSTs of the hosted flow per session, per second (one per 20 s)"
)
FLOW_UPLOAD_BURST_PER_SESSION = ENV.integer(
    "FLOW_UPLOAD_BURST_PER_SESSION", 6, "upload POSTs of the hosted flow per session, at once"
)
FLOW_UPLOAD_RATE_PER_ADDRESS = ENV.number(
    "FLOW_UPLOAD_RATE_PER_ADDRESS", 0.5, "upload POSTs of the hosted flow per client address, per second"
)
FLOW_UPLOAD_BURST_PER_ADDRESS = ENV.integer(
    "FLOW_UPLOAD_BURST_PER_ADDRESS", 20, "upload POSTs of the hosted flow per client address, at once"
)
# Age passes (age_passes/, docs/age-pass.md): a proved age kept with a passkey on the user's device.
AGE_PASS_LIFETIME_DAYS = ENV.integer(
    "AGE_PASS_LIFETIME_DAYS", 365, "days an age pass lasts after its proof (a tenant may ask for less)", minimum=1
)
AGE_PASS_METHODS = ENV.items(
    "AGE_PASS_METHODS",
    "face,document,digital_id",
    "the methods whose approvals may be saved as an age pass: face, document, digital_id",
)
if set(AGE_PASS_METHODS) - {"face", "document", "digital_id"}:
    raise ConfigurationError(f"AGE_PASS_METHODS names methods face, document, digital_id; got {AGE_PASS_METHODS}")
# Digital ID (docs/digital-id.md): the operator's reader certificate, which signs the wallet requests.
DIGITAL_ID_READER_KEY_FILE = ENV.text(
    "DIGITAL_ID_READER_KEY_FILE",
    "",
    "PEM file of the reader certificate's private key (`manage.py reader_certificate csr` writes it); unset: "
    "wallet requests go unsigned, and only to tenants whose operator allows that for testing",
    example="/etc/ageverify/reader.key",
)
DIGITAL_ID_READER_CHAIN_FILE = ENV.text(
    "DIGITAL_ID_READER_CHAIN_FILE",
    "",
    "PEM file of the issued reader certificate chain, leaf first (`manage.py reader_certificate import` writes it)",
    example="/etc/ageverify/reader-chain.pem",
)
DIGITAL_ID_CLIENT_ID_SCHEME = ENV.choice(
    "DIGITAL_ID_CLIENT_ID_SCHEME",
    "x509_san_dns",
    ["x509_san_dns", "x509_hash"],
    "the OpenID4VP client identifier of signed requests: the `PUBLIC_BASE_URL` host named in the leaf's SAN, "
    "or the hash of the leaf",
)
DIGITAL_ID_READER_WARN_DAYS = ENV.integer(
    "DIGITAL_ID_READER_WARN_DAYS",
    30,
    "days before the reader certificate expires that `/readyz` and the admin start warning",
    minimum=1,
)
# An in-progress idempotent request older than this is taken as abandoned (its process died).
IDEMPOTENCY_LOCK_TIMEOUT = timedelta(seconds=60)

# --- Webhooks (CONTRACT 5) ---
ENV.section = "Webhooks"
WEBHOOK_ALLOW_PRIVATE_TARGETS = ENV.flag(
    "WEBHOOK_ALLOW_PRIVATE_TARGETS",
    False,
    "allow webhooks and `notification_url` to loopback/private hosts (tests, local development only)",
    production=DEVELOPMENT,
)
WEBHOOK_CA_BUNDLE = ENV.text(
    "WEBHOOK_CA_BUNDLE",
    "",
    "CA bundle (a file) for webhook TLS; `REQUESTS_CA_BUNDLE` when it is not set",
    shown="system trust store",
    example="/etc/ageverify/webhook-ca.pem",
)
_REQUESTS_CA_BUNDLE = ENV.text(
    "REQUESTS_CA_BUNDLE", "", "the CA bundle for webhook TLS when `WEBHOOK_CA_BUNDLE` is not set", shown="empty"
)
WEBHOOK_CA_BUNDLE = WEBHOOK_CA_BUNDLE or _REQUESTS_CA_BUNDLE or None
WEBHOOK_EGRESS_IPS = ENV.items(
    "WEBHOOK_EGRESS_IPS", "", "source addresses shown to partners who allowlist by IP (the dashboard lists them)"
)
WEBHOOK_CONNECT_TIMEOUT = ENV.number("WEBHOOK_CONNECT_TIMEOUT", 3, "seconds to connect, per webhook attempt")
# The whole attempt (DNS, connect, TLS, send, status and headers, the first 1 KiB) must end within this.
WEBHOOK_TOTAL_TIMEOUT = ENV.number(
    "WEBHOOK_TOTAL_TIMEOUT",
    10,
    "seconds for the whole webhook attempt (DNS, connect, TLS, send, status and headers, the first 1 KiB)",
)
# Seconds to wait before each attempt (the first is immediate); its length is the number of attempts.
WEBHOOK_RETRY_SCHEDULE = [0, 5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600]
WEBHOOK_RETRY_JITTER = 0.2
# While an attempt is in flight its delivery is not due for this long; if the worker dies mid-send,
# the sweep retries after it (so delivery is at-least-once). Must exceed WEBHOOK_TOTAL_TIMEOUT.
WEBHOOK_SEND_LEASE_SECONDS = ENV.integer(
    "WEBHOOK_SEND_LEASE_SECONDS",
    60,
    "an attempt in flight is not retried before this many seconds (worker crash recovery); must exceed "
    "`WEBHOOK_TOTAL_TIMEOUT`",
    minimum=1,
)
# Deliveries of one tenant in flight at once in one delivery worker process (its thread pool's share),
# so that a receiver that hangs holds at most this many threads and other tenants' webhooks go on.
WEBHOOK_TENANT_MAX_IN_FLIGHT = ENV.integer(
    "WEBHOOK_TENANT_MAX_IN_FLIGHT",
    8,
    "a tenant's share of one delivery worker process's threads (see \"How it scales out\")",
    minimum=1,
)
# A delivery the sweep queued is not queued again for this long, so a busy worker is not flooded.
WEBHOOK_REQUEUE_AFTER_SECONDS = ENV.integer(
    "WEBHOOK_REQUEUE_AFTER_SECONDS",
    60,
    "seconds before the sweep queues again a delivery it queued, so a busy worker is not flooded",
)
# A tenant's new deliveries are sent by its drains (webhooks.drains): at most this many at once across
# all delivery workers, each one delivery after another, for at most WEBHOOK_DRAIN_SLICE_SECONDS before
# it goes back to the end of the queue. 0: one queued task per delivery instead. More is not faster to a
# fast receiver (the drains of one process share its GIL; docs/scaling.md).
WEBHOOK_TENANT_DRAINS = ENV.integer(
    "WEBHOOK_TENANT_DRAINS",
    8,
    "most drains sending one tenant's new deliveries at once, across all delivery workers; `0`: one queued task "
    "per delivery",
)
WEBHOOK_DRAIN_SLICE_SECONDS = ENV.number(
    "WEBHOOK_DRAIN_SLICE_SECONDS",
    1,
    "a drain goes back to the end of the queue after this many seconds, so other tenants get their turn",
)

# --- Dashboard sign-in throttling: failures per username and per client address within one window ---
ENV.section = "Dashboard sign-in"
DASHBOARD_LOGIN_MAX_FAILURES_PER_USER = ENV.integer(
    "DASHBOARD_LOGIN_MAX_FAILURES_PER_USER",
    5,
    "failed sign-ins (dashboard and `/admin/`) before that username is paused",
    minimum=1,
)
DASHBOARD_LOGIN_MAX_FAILURES_PER_IP = ENV.integer(
    "DASHBOARD_LOGIN_MAX_FAILURES_PER_IP",
    20,
    "failed sign-ins (dashboard and `/admin/`) before that client address is paused",
    minimum=1,
)
DASHBOARD_LOGIN_WINDOW_SECONDS = ENV.integer(
    "DASHBOARD_LOGIN_WINDOW_SECONDS", 15 * 60, "the sign-in throttling window, in seconds", minimum=1
)
# How many reverse proxies of ours append to X-Forwarded-For; 0 trusts only REMOTE_ADDR. Behind one TLS
# proxy set 1, or every client shares the proxy's address and so one per-address budget.
DASHBOARD_LOGIN_TRUSTED_PROXIES = ENV.integer(
    "DASHBOARD_LOGIN_TRUSTED_PROXIES",
    0,
    "how many of our own proxies append to `X-Forwarded-For` (client addresses of the sign-in throttle and "
    "every per-address limit); set `1` behind one TLS proxy, or every client shares the proxy's address",
    production=SET,
    example="1",
)

# --- Pipeline health (GET /ops/pipeline, the admin's front page): failing above these, in seconds ---
ENV.section = "Pipeline health"
PIPELINE_HEARTBEAT_MAX_AGE = ENV.number(
    "PIPELINE_HEARTBEAT_MAX_AGE", 120, "seconds above which `/ops/pipeline` fails a queue's heartbeat check"
)
PIPELINE_DELIVERY_MAX_LAG = ENV.number(
    "PIPELINE_DELIVERY_MAX_LAG", 120, "seconds above which `/ops/pipeline` fails the oldest due delivery check"
)
# Deliveries go out within seconds; one due for longer means a worker or the broker is in trouble (`degraded`).
PIPELINE_DELIVERY_LATE_AFTER = ENV.number(
    "PIPELINE_DELIVERY_LATE_AFTER",
    15,
    "seconds above which `/ops/pipeline` calls the oldest due delivery late and the pipeline `degraded`",
)
# Each analysis task (a selfie or a document) is ended after this many seconds and the user asked for a retake:
# one crafted picture cannot hold an analysis worker, and every tenant's analyses behind it, for long.
ANALYSIS_SOFT_TIME_LIMIT = ENV.number(
    "ANALYSIS_SOFT_TIME_LIMIT",
    60,
    "seconds one analysis may run before it is ended as a retake (Celery soft time limit; read by the analysis worker)",
)
# Analyses wait in this many queues, those of a tenant's users at one address always in the same one
# (sessions_api.tasks); an analysis worker takes from them in turn, so one tenant's or one address's flood waits
# behind its own work (and that of those sharing its queue).
ANALYSIS_QUEUE_SHARDS = ENV.integer(
    "ANALYSIS_QUEUE_SHARDS",
    16,
    "queues the analyses are spread over by tenant and client address; workers take from them in turn (`1`: "
    "one queue, first in first out)",
    minimum=1,
)
# At most this many analyses of one tenant's users at one client address run at once, whatever the number of worker
# processes (sessions_api.analysis_lanes): one address's flood cannot take every process when the others' queues are
# empty, and the next user is taken at once.
ANALYSIS_RUNNING_PER_ADDRESS = ENV.integer(
    "ANALYSIS_RUNNING_PER_ADDRESS",
    1,
    "analyses of one tenant's users at one client address that run at once; more wait a second and try again "
    "(`0`: no limit)",
    minimum=0,
)
PIPELINE_ANALYSIS_MAX_WAIT = ENV.number(
    "PIPELINE_ANALYSIS_MAX_WAIT", 120, "seconds above which `/ops/pipeline` fails the oldest waiting analysis check"
)
# Monitoring reads /ops/pipeline with `Authorization: Bearer <token>`; empty: signed-in operators only.
PIPELINE_STATUS_TOKEN = ENV.secret(
    "PIPELINE_STATUS_TOKEN",
    debug=DEBUG,
    required=False,
    meaning="bearer token for monitoring to read `/ops/pipeline` (empty: signed-in operators only)",
    production=SET,
    example="change-me-long-random",
)

# --- Flower (Celery monitoring): "user:password" pairs, comma separated; flowerconfig.py refuses to start without.
ENV.section = "Flower"
FLOWER_BASIC_AUTH = ENV.items(
    "FLOWER_BASIC_AUTH",
    "",
    "`user:password` pairs for Flower, which refuses to start without",
    shown="none (required by Flower)",
    example="ops:change-me",
)
if not DEBUG:  # Flower's own check (flowerconfig.py) wants the pairs; a password copied from the example is refused
    for _pair in FLOWER_BASIC_AUTH:
        refuse_weak_secret("FLOWER_BASIC_AUTH", _pair.partition(":")[2], part="password")

ENV.section = "Logging"
LOG_LEVEL = ENV.choice("LOG_LEVEL", "INFO", ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"], "root log level")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {"django.request": {"handlers": ["console"], "level": "ERROR", "propagate": False}},
}
