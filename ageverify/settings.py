"""AgeVerify settings: every knob is read from the environment here, and only here.

Development defaults are safe to run on a laptop (SQLite, a filesystem broker); with DEBUG off a
missing secret is a loud start-up failure, never a silent default.
"""

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
import redis.backoff
import redis.retry
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("AGEVERIFY_VAR_DIR", BASE_DIR / "var"))


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def env_secret(name: str, dev_default: str) -> str:
    value = os.environ.get(name, "")
    if value:
        return value
    if DEBUG:
        return dev_default
    raise ImproperlyConfigured(f"{name} must be set when DEBUG is off")


DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_secret("SECRET_KEY", "dev-only-secret-key-not-for-production")
# Signs the hosted flow link (CONTRACT 1: `signature`); distinct from SECRET_KEY so either can rotate alone.
FLOW_SIGNING_KEY = env_secret("FLOW_SIGNING_KEY", "dev-only-flow-signing-key")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")
PUBLIC_BASE_URL = os.environ.get("PUBLIC_BASE_URL", "http://localhost:8000").rstrip("/")

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
    "flow",
    "dashboard",
    "pipeline",
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

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'ageverify.sqlite3'}",
        conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", "60")),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"].setdefault("OPTIONS", {})["connect_timeout"] = 5
    # Django's cursors bind on the client and are never prepared; this only lets tenants.hot_sql run the
    # API's hot queries as prepared statements (Django leaves psycopg's preparation off by default).
    # Off (DATABASE_PREPARED_STATEMENTS=0) behind a pooler that cannot keep them (PgBouncer before 1.21).
    DATABASES["default"]["OPTIONS"]["prepare_threshold"] = 5 if env_bool("DATABASE_PREPARED_STATEMENTS", True) else None
# A reused connection is checked before its first query of each request or task (workers call
# close_old_connections around every task), so a PostgreSQL restart costs no request and no task.
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Off: a session's creation commits without waiting for the WAL flush (PostgreSQL only), as webhook
# attempts do; a database crash within about 0.6 s of a 201 may undo that creation (README, "API behaviour
# in brief"). On: every creation waits for the disk, at about a tenth of POST's throughput.
SESSION_CREATE_WAIT_FOR_DISK = env_bool("SESSION_CREATE_WAIT_FOR_DISK", False)

# Redis is the broker, the rate limiter's store and the cache. Without REDIS_URL (the embedded demo)
# Celery uses a filesystem broker shared by the web process and the worker, and the cache is local.
REDIS_URL = os.environ.get("REDIS_URL", "")
# Every Redis call on the request path (rate limiter, cache, task publish) gives up after this many
# seconds, without retrying: a frozen Redis costs a request at most this, and the callers fail open
# (rate limit, sign-in throttle) or leave the work to a sweep (webhooks). redis-py retries 3 times by default.
REDIS_REQUEST_TIMEOUT = float(os.environ.get("REDIS_REQUEST_TIMEOUT", "0.5"))
# After a Redis failure, request-path callers skip Redis for this long (tenants/redis_outage.py).
REDIS_OUTAGE_BACKOFF_SECONDS = float(os.environ.get("REDIS_OUTAGE_BACKOFF_SECONDS", "5"))
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
BROKER_VISIBILITY_TIMEOUT = int(os.environ.get("BROKER_VISIBILITY_TIMEOUT", "300"))
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
    "unacked_restore_interval": int(os.environ.get("BROKER_UNACKED_RESTORE_INTERVAL", "10")),
}
# The worker's own broker connection waits longer than a request would (see ageverify/celery.py).
CELERY_WORKER_BROKER_SOCKET_TIMEOUT = 5
CELERY_TASK_PUBLISH_RETRY = False
# Survives a broker loss while a task runs (Celery 5.7.0 exits; see ageverify/worker.py). A task that
# is running when the broker goes away finishes (its webhook is sent) instead of being cancelled.
CELERY_WORKER_CONSUMER = "ageverify.worker:Consumer"
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
# Without this Celery's Django fixup opens a new database connection for every task (~10 ms each).
CELERY_DB_REUSE_MAX = 1000
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_BEAT_SCHEDULE = {
    "sessions-expire-due": {"task": "sessions_api.tasks.sessions_expire_due", "schedule": timedelta(seconds=30)},
    # Sessions left in processing by a lost or expired analysis message go back to their step.
    "stuck-analyses-release": {"task": "sessions_api.tasks.stuck_analyses_release", "schedule": timedelta(seconds=60)},
    "webhooks-sweep-due": {"task": "webhooks.tasks.webhook_deliveries_sweep", "schedule": timedelta(seconds=15)},
    "idempotency-records-purge": {
        "task": "sessions_api.tasks.idempotency_records_purge",
        "schedule": timedelta(hours=1),
    },
    # Final sessions past their tenant's retention_days (sessions_api/retention.py).
    "final-sessions-purge": {"task": "sessions_api.tasks.final_sessions_purge", "schedule": timedelta(hours=1)},
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
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "0" if DEBUG else str(365 * 24 * 3600)))
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
# Behind the TLS proxy (README, "Production"): trust its X-Forwarded-Proto, or requests never look secure.
if env_bool("TRUST_X_FORWARDED_PROTO", False):
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
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND") or (
    _CONSOLE_EMAIL if DEBUG else "django.core.mail.backends.smtp.EmailBackend"
)
if EMAIL_BACKEND == _CONSOLE_EMAIL and not DEBUG:
    raise ImproperlyConfigured(
        "EMAIL_BACKEND=console writes password reset links to the log; use SMTP when DEBUG is off"
    )
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "25"))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_TIMEOUT = 10
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "AgeVerify <no-reply@localhost>")

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
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": r"/v1",
    # 3.1 for its `webhooks`: the events AgeVerify sends, their payloads and headers.
    "OAS_VERSION": "3.1.0",
    "WEBHOOKS": [
        "sessions_api.api.webhook_schema.verification_completed",
        "sessions_api.api.webhook_schema.test_event",
    ],
}

# --- API limits (CONTRACT 2) ---
API_MAX_BODY_BYTES = 16 * 1024
API_RATE_LIMIT_PER_SECOND = int(os.environ.get("API_RATE_LIMIT_PER_SECOND", "100"))
API_RATE_LIMIT_BURST = int(os.environ.get("API_RATE_LIMIT_BURST", "200"))
# Requests with a missing or invalid key, per client address (see DASHBOARD_LOGIN_TRUSTED_PROXIES).
API_UNAUTHENTICATED_RATE_PER_SECOND = float(os.environ.get("API_UNAUTHENTICATED_RATE_PER_SECOND", "2"))
API_UNAUTHENTICATED_BURST = int(os.environ.get("API_UNAUTHENTICATED_BURST", "30"))
# Sessions created from a browser or app with a publishable key (SDK mode, opt-in per key).
CLIENT_SESSIONS_RATE_PER_KEY = float(os.environ.get("CLIENT_SESSIONS_RATE_PER_KEY", "5"))
CLIENT_SESSIONS_BURST_PER_KEY = int(os.environ.get("CLIENT_SESSIONS_BURST_PER_KEY", "30"))
CLIENT_SESSIONS_RATE_PER_ADDRESS = float(os.environ.get("CLIENT_SESSIONS_RATE_PER_ADDRESS", "0.2"))
CLIENT_SESSIONS_BURST_PER_ADDRESS = int(os.environ.get("CLIENT_SESSIONS_BURST_PER_ADDRESS", "10"))
IDEMPOTENCY_TTL = timedelta(hours=24)
# The calibrated age policy (sessions_api/age_assurance/policy.py); empty: the committed age_policy.json.
AGE_POLICY_FILE = os.environ.get("AGE_POLICY_FILE", "")
# Upload POSTs of the hosted flow (flow/upload_rate.py): per session, and per client address.
FLOW_UPLOAD_RATE_PER_SESSION = float(os.environ.get("FLOW_UPLOAD_RATE_PER_SESSION", "0.05"))  # one per 20 s
FLOW_UPLOAD_BURST_PER_SESSION = int(os.environ.get("FLOW_UPLOAD_BURST_PER_SESSION", "6"))
FLOW_UPLOAD_RATE_PER_ADDRESS = float(os.environ.get("FLOW_UPLOAD_RATE_PER_ADDRESS", "0.5"))
FLOW_UPLOAD_BURST_PER_ADDRESS = int(os.environ.get("FLOW_UPLOAD_BURST_PER_ADDRESS", "20"))
# An in-progress idempotent request older than this is taken as abandoned (its process died).
IDEMPOTENCY_LOCK_TIMEOUT = timedelta(seconds=60)

# --- Webhooks (CONTRACT 5) ---
WEBHOOK_ALLOW_PRIVATE_TARGETS = env_bool("WEBHOOK_ALLOW_PRIVATE_TARGETS", False)
WEBHOOK_CA_BUNDLE = os.environ.get("WEBHOOK_CA_BUNDLE") or os.environ.get("REQUESTS_CA_BUNDLE") or None
WEBHOOK_EGRESS_IPS = env_list("WEBHOOK_EGRESS_IPS")
WEBHOOK_CONNECT_TIMEOUT = float(os.environ.get("WEBHOOK_CONNECT_TIMEOUT", "3"))
# The whole attempt (DNS, connect, TLS, send, status and headers, the first 1 KiB) must end within this.
WEBHOOK_TOTAL_TIMEOUT = float(os.environ.get("WEBHOOK_TOTAL_TIMEOUT", "10"))
# Seconds to wait before each attempt (the first is immediate); its length is the number of attempts.
WEBHOOK_RETRY_SCHEDULE = [0, 5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600]
WEBHOOK_RETRY_JITTER = 0.2
# While an attempt is in flight its delivery is not due for this long; if the worker dies mid-send,
# the sweep retries after it (so delivery is at-least-once). Must exceed WEBHOOK_TOTAL_TIMEOUT.
WEBHOOK_SEND_LEASE_SECONDS = int(os.environ.get("WEBHOOK_SEND_LEASE_SECONDS", "60"))
# Deliveries of one tenant in flight at once in one delivery worker process (its thread pool's share),
# so that a receiver that hangs holds at most this many threads and other tenants' webhooks go on.
WEBHOOK_TENANT_MAX_IN_FLIGHT = int(os.environ.get("WEBHOOK_TENANT_MAX_IN_FLIGHT", "8"))
# A delivery the sweep queued is not queued again for this long, so a busy worker is not flooded.
WEBHOOK_REQUEUE_AFTER_SECONDS = int(os.environ.get("WEBHOOK_REQUEUE_AFTER_SECONDS", "60"))
# A tenant's new deliveries are sent by its drains (webhooks.drains): at most this many at once across
# all delivery workers, each one delivery after another, for at most WEBHOOK_DRAIN_SLICE_SECONDS before
# it goes back to the end of the queue. 0: one queued task per delivery instead. More is not faster to a
# fast receiver (the drains of one process share its GIL; README, "How it scales out").
WEBHOOK_TENANT_DRAINS = int(os.environ.get("WEBHOOK_TENANT_DRAINS", "8"))
WEBHOOK_DRAIN_SLICE_SECONDS = float(os.environ.get("WEBHOOK_DRAIN_SLICE_SECONDS", "1"))

# --- Dashboard sign-in throttling: failures per username and per client address within one window ---
DASHBOARD_LOGIN_MAX_FAILURES_PER_USER = int(os.environ.get("DASHBOARD_LOGIN_MAX_FAILURES_PER_USER", "5"))
DASHBOARD_LOGIN_MAX_FAILURES_PER_IP = int(os.environ.get("DASHBOARD_LOGIN_MAX_FAILURES_PER_IP", "20"))
DASHBOARD_LOGIN_WINDOW_SECONDS = int(os.environ.get("DASHBOARD_LOGIN_WINDOW_SECONDS", str(15 * 60)))
# How many reverse proxies of ours append to X-Forwarded-For; 0 trusts only REMOTE_ADDR. Behind one TLS
# proxy set 1, or every client shares the proxy's address and so one per-address budget.
DASHBOARD_LOGIN_TRUSTED_PROXIES = int(os.environ.get("DASHBOARD_LOGIN_TRUSTED_PROXIES", "0"))

# --- Pipeline health (GET /ops/pipeline, the admin's front page): failing above these, in seconds ---
PIPELINE_HEARTBEAT_MAX_AGE = float(os.environ.get("PIPELINE_HEARTBEAT_MAX_AGE", "120"))
PIPELINE_DELIVERY_MAX_LAG = float(os.environ.get("PIPELINE_DELIVERY_MAX_LAG", "120"))
PIPELINE_ANALYSIS_MAX_WAIT = float(os.environ.get("PIPELINE_ANALYSIS_MAX_WAIT", "120"))
# Monitoring reads /ops/pipeline with `Authorization: Bearer <token>`; empty: signed-in operators only.
PIPELINE_STATUS_TOKEN = os.environ.get("PIPELINE_STATUS_TOKEN", "")

# --- Flower (Celery monitoring): "user:password" pairs, comma separated; flowerconfig.py refuses to start without.
FLOWER_BASIC_AUTH = env_list("FLOWER_BASIC_AUTH")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"django.request": {"handlers": ["console"], "level": "ERROR", "propagate": False}},
}
