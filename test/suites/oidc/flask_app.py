"""A relying party written as Flask and Authlib's own documentation writes one: the second real app
that `npm run test:oidc` signs in to through Gatehouse (test/suites/oidc/flask-authlib.test.ts).

Debian's python3-flask and python3-authlib, nothing installed from PyPI. The code flow with PKCE
(S256) and a client secret, the id_token checked by Authlib (signature against the JWKS, issuer,
audience, nonce), and RP-initiated logout back to this app. Settings come from the environment:
GATEHOUSE_ISSUER, CLIENT_ID, CLIENT_SECRET, PORT. It serves on 127.0.0.1 only, in the foreground,
until the test stops it.
"""

import html
import json
import os
import secrets
from urllib.parse import urlencode

from authlib.integrations.flask_client import OAuth
from flask import Flask, redirect, request, session, url_for

ISSUER = os.environ["GATEHOUSE_ISSUER"]
PORT = int(os.environ["PORT"])

app = Flask(__name__)
app.secret_key = secrets.token_bytes(32)

oauth = OAuth(app)
oauth.register(
    "gatehouse",
    client_id=os.environ["CLIENT_ID"],
    client_secret=os.environ["CLIENT_SECRET"],
    server_metadata_url=f"{ISSUER}/.well-known/openid-configuration",
    client_kwargs={"scope": "openid profile email groups", "code_challenge_method": "S256"},
)


def page(title, body):
    return f"<!doctype html><title>{html.escape(title)}</title><h1>{html.escape(title)}</h1>{body}"


@app.route("/")
def home():
    user = session.get("user")
    if user is None:
        return page("Flask app", '<a id="sign-in" href="/login">Sign in with Gatehouse</a>')
    claims = html.escape(json.dumps(user, sort_keys=True))
    return page("Flask app", f'<pre id="claims">{claims}</pre><a id="sign-out" href="/logout">Sign out</a>')


@app.route("/login")
def login():
    return oauth.gatehouse.authorize_redirect(url_for("callback", _external=True))


@app.route("/callback")
def callback():
    token = oauth.gatehouse.authorize_access_token()
    # Authlib has checked the id_token (JWKS, iss, aud, nonce); userinfo is fetched as an app would.
    claims = dict(token["userinfo"])
    claims["userinfo_endpoint"] = dict(oauth.gatehouse.userinfo(token=token))
    session["user"] = claims
    session["id_token"] = token["id_token"]
    return redirect("/")


@app.route("/logout")
def logout():
    id_token = session.pop("id_token", None)
    session.pop("user", None)
    state = secrets.token_urlsafe(16)
    session["logout_state"] = state
    metadata = oauth.gatehouse.load_server_metadata()
    query = {"post_logout_redirect_uri": url_for("signed_out", _external=True), "state": state}
    if id_token is not None:
        query["id_token_hint"] = id_token
    return redirect(f"{metadata['end_session_endpoint']}?{urlencode(query)}")


@app.route("/signed-out")
def signed_out():
    matches = request.args.get("state") is not None and request.args.get("state") == session.pop("logout_state", None)
    return page("Signed out", f'<p id="state">{"state matches" if matches else "state does not match"}</p>')


if __name__ == "__main__":
    app.run(host="127.0.0.1", port=PORT, debug=False, use_reloader=False)
