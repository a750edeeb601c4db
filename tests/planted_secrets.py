"""A real-looking terminal observation with 20 planted secret shapes, made at test time (seeded,
in each format's alphabet and length) so the repository holds no key-shaped text.

The session is what an agent sees after `env`, `curl -v`, `cat ~/.ssh/...` and `psql` in a
container; it includes the two shapes an earlier scrubber let through: a password with URL
sub-delimiters in `scheme://user:password@host/db` (and one with an empty user) and the opaque
token of an `Authorization: Bearer ...` header.
"""

from __future__ import annotations

import base64
import json
import random
import string

ALNUM = string.ascii_letters + string.digits


def _random(alphabet: str, n: int, rng: random.Random) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64(document: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(document).encode()).decode().rstrip("=")


def terminal_session(seed: int = 11) -> tuple[str, list[tuple[str, str]]]:
    """(the session text, [(kind, value)] for each planted value, in order of appearance)."""
    rng = random.Random(seed)
    upper = string.ascii_uppercase + string.digits
    armour = "-----{} OPENSSH PRIVATE KEY-----"
    key_body = "\n".join(_random(ALNUM + "+/", 70, rng) for _ in range(5))
    basic = base64.b64encode(f"deploy:{_random(ALNUM, 16, rng)}".encode()).decode()
    planted = {
        "anthropic": ("anthropic_key", f"sk-ant-api03-{_random(ALNUM + '_-', 93, rng)}AA"),
        "aws_id": ("aws_access_key", f"AKIA{_random(upper, 16, rng)}"),
        "aws_secret": ("aws_secret_key", _random(ALNUM + "/+", 40, rng)),
        "db_password": ("password_in_url", f"{_random(ALNUM, 6, rng)}!$&{_random(ALNUM, 5, rng)}"),
        "github": ("github_token", f"ghp_{_random(ALNUM, 36, rng)}"),
        "hf": ("huggingface_token", f"hf_{_random(ALNUM, 34, rng)}"),
        "openai": ("openai_key", f"sk-proj-{_random(ALNUM + '_-', 48, rng)}"),
        "redis_password": ("password_in_url", _random(ALNUM, 12, rng)),
        "slack": ("slack_token", f"xoxb-{_random(string.digits, 12, rng)}-"
                                 f"{_random(string.digits, 13, rng)}-"
                                 f"{_random(string.ascii_lowercase + string.digits, 24, rng)}"),
        "env_password": ("env_secret", _random(ALNUM, 18, rng)),
        "bearer": ("auth_header", _random(ALNUM + "-_.", 40, rng)),
        "api_key_header": ("auth_header", _random(string.hexdigits.lower(), 32, rng)),
        "basic": ("auth_header", basic),
        "jwt": ("jwt", f"{_b64({'alg': 'HS256', 'typ': 'JWT'})}.{_b64({'sub': '42'})}."
                       f"{_random(ALNUM, 43, rng)}"),
        "google": ("google_api_key", f"AIza{_random(ALNUM + '_-', 35, rng)}"),
        "email": ("email", "jane.doe@corp-mail.com"),
        "phone": ("phone", "+1 415 555 0134"),
        "ip": ("ip_address", "198.51.100.73"),
        "private_key": ("private_key", f"{armour.format('BEGIN')}\n{key_body}\n"
                                       f"{armour.format('END')}"),
        "keyword": ("keyword_secret", f"{_random(ALNUM, 12, rng)}-staple"),
    }
    v = {name: value for name, (_, value) in planted.items()}
    text = f"""root@7f3c2a9e41d0:/app# env | sort
ANTHROPIC_API_KEY={v['anthropic']}
AWS_ACCESS_KEY_ID={v['aws_id']}
AWS_SECRET_ACCESS_KEY={v['aws_secret']}
DATABASE_URL=postgresql://orders_app:{v['db_password']}@db.internal:5432/orders
GITHUB_TOKEN={v['github']}
HF_TOKEN={v['hf']}
HOME=/root
HOSTNAME=7f3c2a9e41d0
OPENAI_API_KEY={v['openai']}
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
REDIS_URL=redis://:{v['redis_password']}@cache:6379/0
SLACK_BOT_TOKEN={v['slack']}
SMTP_PASSWORD={v['env_password']}
root@7f3c2a9e41d0:/app# curl -sv https://api.orders.example.net/v1/orders?limit=1 \\
>   -H "Authorization: Bearer {v['bearer']}"
*   Trying {v['ip']}:443...
* Connected to api.orders.example.net ({v['ip']}) port 443 (#0)
> GET /v1/orders?limit=1 HTTP/1.1
> Host: api.orders.example.net
> User-Agent: curl/8.5.0
> Accept: */*
> Authorization: Bearer {v['bearer']}
> X-API-Key: {v['api_key_header']}
>
< HTTP/1.1 200 OK
< Content-Type: application/json
< Set-Cookie: session={v['jwt']}; HttpOnly
<
{{"id": 1841, "owner": "{v['email']}", "phone": "{v['phone']}", "client_ip": "{v['ip']}"}}
root@7f3c2a9e41d0:/app# curl -s -H 'Authorization: Basic {v['basic']}' https://ci.example.net/api/json
{{"jobs": []}}
root@7f3c2a9e41d0:/app# grep -rn maps_key config/
config/maps.yaml:3:maps_key: {v['google']}
config/settings.py:12:password = "{v['keyword']}"
root@7f3c2a9e41d0:/app# cat ~/.ssh/id_ed25519
{v['private_key']}
root@7f3c2a9e41d0:/app# psql "$DATABASE_URL" -c 'select count(*) from orders'
 count
-------
  1841
(1 row)

root@7f3c2a9e41d0:/app# """
    return text, list(planted.values())
