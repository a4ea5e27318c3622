//! Browsers sign in with the token, as Jupyter's and Grafana's token logins
//! do: `GET /login` is a form that takes the token, `POST /login` checks it and sets a
//! session cookie, `POST /logout` ends the session.
//!
//! **The cookie** names a session of this process (256 random bits from the kernel,
//! never the token itself): `HttpOnly` (no script reads it), `SameSite=Strict` (no other
//! site's page or link sends it), `Path=/`, and `Secure` when the request came through
//! a TLS proxy (`X-Forwarded-Proto: https`). A session ends at logout, after
//! [`IDLE`] unused, after [`MAX_AGE`], or when the daemon restarts (sessions are kept in
//! memory only: signing in again is the cost).
//!
//! **Forms that change something are CSRF-safe** three ways: the cookie is
//! `SameSite=Strict`; the server refuses requests whose `Origin` is another site's
//! (`wire`); and a POST that a session authenticates must carry the session's own CSRF
//! token, the form field `csrf` (the inspector's forms hold it: [`fill_forms`]) or the
//! header `X-CSRF-Token`. Requests with `Authorization: Bearer` need none (no browser
//! adds that header by itself).
//!
//! **Guessing**: the token is compared in constant time, and wrong tokens are counted per
//! client ([`Failures`]: an IPv4 address, or an IPv6 /64), at sign-in and in
//! `Authorization: Bearer` alike: after [`MAX_FAILURES`] within [`FAILURE_WINDOW`] that
//! client's tokens are refused (429) for the window, then twice as long at each new
//! round, up to [`MAX_BLOCK`]. A stranger's wrong tokens never close sign-in for anyone
//! else. Behind a
//! proxy every client is the proxy's address: the proxy should limit sign-ins itself.

use std::collections::HashMap;
use std::io::Read;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::wire::{json_error, Answer, Auth, Gate, Reply, Request, HTML};
use crate::view::html;

/// The session cookie's name.
pub(super) const COOKIE: &str = "textorigin_session";
/// A session unused this long ends.
pub(super) const IDLE: Duration = Duration::from_secs(12 * 3600);
/// A session ends this long after its sign-in, used or not.
pub(super) const MAX_AGE: Duration = Duration::from_secs(7 * 24 * 3600);
/// Sessions kept at most (the least recently used one ends past it).
const MAX_SESSIONS: usize = 4096;
/// Failed sign-ins that close sign-in for the rest of [`FAILURE_WINDOW`].
pub(super) const MAX_FAILURES: usize = 10;
pub(super) const FAILURE_WINDOW: Duration = Duration::from_secs(60);
/// The longest a client's tokens are refused for.
pub(super) const MAX_BLOCK: Duration = Duration::from_secs(3600);
/// Clients whose failures are remembered at most (those neither refused nor failing
/// lately are forgotten first).
const MAX_CLIENTS: usize = 1 << 16;

/// The live sessions of a server with a token.
pub(super) struct Sessions {
    /// The token; replaced when the daemon reloads it ([`Sessions::set_token`]).
    token: std::sync::RwLock<String>,
    live: Mutex<HashMap<String, Session>>,
    failures: Mutex<Failures>,
}

/// The wrong tokens of each client (see the module docs).
#[derive(Default)]
pub(super) struct Failures {
    clients: HashMap<IpAddr, Client>,
}

/// One client's wrong tokens.
struct Client {
    /// The failures of the current window, and when it began.
    window: (Instant, usize),
    /// Until when its tokens are refused, and how many times they have been.
    refused_until: Instant,
    rounds: u32,
}

/// The address failures are counted by: an IPv6 client owns a whole /64.
fn client_key(peer: IpAddr) -> IpAddr {
    match peer {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !((1u128 << 64) - 1))),
        },
        v4 => v4,
    }
}

impl Failures {
    /// How long `peer`'s tokens are still refused for, if they are.
    fn refused(&self, peer: IpAddr, now: Instant) -> Option<Duration> {
        let c = self.clients.get(&client_key(peer))?;
        (c.refused_until > now).then(|| c.refused_until - now)
    }

    /// Counts a wrong token of `peer`'s.
    fn failed(&mut self, peer: IpAddr, now: Instant) {
        if self.clients.len() >= MAX_CLIENTS {
            self.clients.retain(|_, c| c.refused_until > now || now.duration_since(c.window.0) <= FAILURE_WINDOW);
            if self.clients.len() >= MAX_CLIENTS {
                if let Some(k) = self.clients.iter().find(|(_, c)| c.refused_until <= now).map(|(k, _)| *k) {
                    self.clients.remove(&k);
                }
            }
        }
        let c =
            self.clients.entry(client_key(peer)).or_insert(Client { window: (now, 0), refused_until: now, rounds: 0 });
        if now.duration_since(c.window.0) > FAILURE_WINDOW {
            c.window = (now, 0);
        }
        c.window.1 += 1;
        if c.window.1 >= MAX_FAILURES {
            let block = FAILURE_WINDOW.saturating_mul(1 << c.rounds.min(16)).min(MAX_BLOCK);
            c.refused_until = now + block;
            c.rounds += 1;
            c.window = (now + block, 0);
        }
    }
}

struct Session {
    csrf: String,
    created: Instant,
    seen: Instant,
}

/// Why a sign-in failed.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Refused {
    Wrong,
    /// This client's tokens are refused for this long still.
    Throttled(Duration),
}

impl Sessions {
    pub(super) fn new(token: String) -> Sessions {
        Sessions { token: std::sync::RwLock::new(token), live: Mutex::default(), failures: Mutex::default() }
    }

    /// Replaces the token (SIGHUP rereads its file): the sessions signed in with the old
    /// one end. False, and nothing ends, when it is the same token.
    pub(super) fn set_token(&self, token: String) -> bool {
        let mut t = self.token.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        if *t == token {
            return false;
        }
        *t = token;
        drop(t);
        self.live.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clear();
        true
    }

    /// The CSRF token of the live session a request's `Cookie` header names.
    pub(super) fn check(&self, cookies: Option<&str>) -> Option<String> {
        let id = cookie(cookies, COOKIE)?;
        let mut live = self.live.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = Instant::now();
        let s = live.get_mut(id)?;
        if now.duration_since(s.seen) > IDLE || now.duration_since(s.created) > MAX_AGE {
            live.remove(id);
            return None;
        }
        s.seen = now;
        Some(s.csrf.clone())
    }

    /// Checks a token `peer` gave (at sign-in, or as a bearer token), counting it when
    /// it is wrong.
    fn check_token(&self, peer: IpAddr, given: &str) -> Result<(), Refused> {
        let now = Instant::now();
        let mut failures = self.failures.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(left) = failures.refused(peer, now) {
            return Err(Refused::Throttled(left));
        }
        let right = {
            let token = self.token.read().unwrap_or_else(std::sync::PoisonError::into_inner);
            constant_time_eq(given.trim().as_bytes(), token.as_bytes())
        };
        if !right {
            failures.failed(peer, now);
            return Err(Refused::Wrong);
        }
        Ok(())
    }

    /// Checks a token given by a browser from `peer`: a new session's id.
    pub(super) fn login(&self, peer: IpAddr, given: &str) -> Result<String, Refused> {
        self.check_token(peer, given)?;
        let now = Instant::now();
        let (id, csrf) = (random_hex(), random_hex());
        let mut live = self.live.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        live.retain(|_, s| now.duration_since(s.seen) <= IDLE && now.duration_since(s.created) <= MAX_AGE);
        if live.len() >= MAX_SESSIONS {
            if let Some(oldest) = live.iter().min_by_key(|(_, s)| s.seen).map(|(k, _)| k.clone()) {
                live.remove(&oldest);
            }
        }
        live.insert(id.clone(), Session { csrf, created: now, seen: now });
        Ok(id)
    }

    /// Ends the session a request's `Cookie` header names.
    pub(super) fn logout(&self, cookies: Option<&str>) {
        if let Some(id) = cookie(cookies, COOKIE) {
            self.live.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(id);
        }
    }
}

impl Gate for Sessions {
    /// The token (`Authorization: Bearer`) or a live session lets a request in, and
    /// the sign-in page's own routes let anyone in; a browser asking for another page is
    /// sent to the sign-in page, anything else gets 401.
    fn admit(&self, request: &Request) -> Result<Auth, Answer> {
        if let Some(given) = bearer(request.header("authorization")) {
            return match self.check_token(request.peer, given) {
                Ok(()) => Ok(Auth::Bearer),
                Err(Refused::Wrong) => Err(json_error(401, "the bearer token is not the server's").into()),
                Err(Refused::Throttled(left)) => Err(json_error(429, &throttled(left)).into()),
            };
        }
        if let Some(csrf) = self.check(request.header("cookie")) {
            return Ok(Auth::Session(csrf));
        }
        let path = request.path.trim_end_matches('/');
        if path == "/login" {
            return Ok(Auth::SigningIn);
        }
        let page = request.method == "GET" && !path.starts_with("/api/") && path != "/metrics";
        if page {
            let mut next = request.path.clone();
            if !request.query.is_empty() {
                next += "?";
                next += &form_urlencoded::Serializer::new(String::new()).extend_pairs(&request.query).finish();
            }
            let to = format!("/login?next={}", html::escape_query(&next));
            return Err(see_other(&to, Vec::new()));
        }
        Err(json_error(401, "this server needs `Authorization: Bearer TOKEN` (browsers: sign in at /login)").into())
    }

    /// A POST that a session let in without the session's CSRF token is refused (403).
    fn refuse_body(&self, request: &Request) -> Option<Answer> {
        let Auth::Session(csrf) = &request.auth else { return None };
        (request.method == "POST" && !csrf_given(request, csrf)).then(|| {
            json_error(
                403,
                "a form sent with a session needs its CSRF token (the field `csrf`, or the header X-CSRF-Token): reload the page and send it again",
            )
            .into()
        })
    }
}

/// The token an `Authorization` header gives (the scheme `Bearer` in any case, as RFC
/// 9110 says).
fn bearer(header: Option<&str>) -> Option<&str> {
    let (scheme, given) = header?.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then_some(given.trim())
}

/// Why a client's token is refused unchecked.
fn throttled(left: Duration) -> String {
    format!("too many wrong tokens from this address: try again in {} s", left.as_secs().max(1))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The value of cookie `name` in a `Cookie` header (`a=1; b=2`).
pub(super) fn cookie<'a>(header: Option<&'a str>, name: &str) -> Option<&'a str> {
    header?.split(';').filter_map(|c| c.trim().split_once('=')).find(|(k, _)| *k == name).map(|(_, v)| v.trim())
}

/// 32 random bytes from the kernel, in hex.
fn random_hex() -> String {
    let mut b = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .expect("the kernel's random numbers (/dev/urandom) can be read");
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Whether a request came through a proxy that took it over TLS.
fn over_tls(request: &Request) -> bool {
    request.header("x-forwarded-proto").is_some_and(|p| p.eq_ignore_ascii_case("https"))
}

/// The `Set-Cookie` value of session `id` (empty and expired: ends it).
fn set_cookie(request: &Request, id: Option<&str>) -> String {
    let secure = if over_tls(request) { "; Secure" } else { "" };
    match id {
        Some(id) => format!("{COOKIE}={id}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}{secure}", MAX_AGE.as_secs()),
        None => format!("{COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0{secure}"),
    }
}

/// A page's own address to come back to after signing in: a path on this server as
/// this server writes them (percent-encoded: printable ASCII, no space), starting with
/// one `/` and holding no `\\`, else `/`. Browsers drop tabs and line feeds from a
/// `Location` and read `\\` as `/`, so `/\t/evil.example` or `/\\evil.example` would
/// lead to another host; anything outside printable ASCII is refused before the check.
fn local_path(next: Option<&str>) -> &str {
    match next {
        Some(n)
            if n.bytes().all(|b| b.is_ascii_graphic())
                && n.starts_with('/')
                && !n[1..].starts_with('/')
                && !n.contains('\\') =>
        {
            n
        }
        _ => "/",
    }
}

/// The form fields of a `application/x-www-form-urlencoded` body.
pub(super) fn form(request: &Request) -> Vec<(String, String)> {
    form_urlencoded::parse(&request.body).map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
}

fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// A redirect (303) to `to`, with more headers.
pub(super) fn see_other(to: &str, mut headers: Vec<(&'static str, String)>) -> Answer {
    headers.push(("Location", to.to_string()));
    Answer::Headed((303, HTML, Vec::new()), headers)
}

/// `GET /login?next=PATH`: the sign-in form.
pub(super) fn login_page(request: &Request) -> Reply {
    (200, HTML, page(local_path(request.param("next")), None).into_bytes())
}

/// `POST /login` (form fields `token`, `next`): a session and back to `next`, or the
/// form again with why.
pub(super) fn login(sessions: &Sessions, request: &Request) -> Answer {
    let fields = form(request);
    let next = local_path(field(&fields, "next")).to_string();
    match sessions.login(request.peer, field(&fields, "token").unwrap_or("")) {
        Ok(id) => see_other(&next, vec![("Set-Cookie", set_cookie(request, Some(&id)))]),
        Err(Refused::Wrong) => {
            Answer::Reply((401, HTML, page(&next, Some("That is not the server's token.")).into_bytes()))
        }
        Err(Refused::Throttled(left)) => {
            let why = format!("Too many wrong tokens from this address: try again in {} s.", left.as_secs().max(1));
            Answer::Reply((429, HTML, page(&next, Some(&why)).into_bytes()))
        }
    }
}

/// `POST /logout`: the session ended, the cookie cleared, and the sign-in form.
pub(super) fn logout(sessions: &Sessions, request: &Request) -> Answer {
    sessions.logout(request.header("cookie"));
    see_other("/login", vec![("Set-Cookie", set_cookie(request, None))])
}

fn page(next: &str, error: Option<&str>) -> String {
    let error = error.map_or(String::new(), |e| format!("<p class=\"error\" role=\"alert\">{}</p>", html::escape(e)));
    let body = format!(
        "<h1>Sign in to textorigin</h1>{error}<form method=\"post\" action=\"/login\">\
         <p><label>Token <input type=\"password\" name=\"token\" autocomplete=\"current-password\" size=\"40\" autofocus required></label></p>\
         <input type=\"hidden\" name=\"next\" value=\"{}\"><p><button>Sign in</button></p></form>\
         <p><small>The token is the content of the file the server was started with (<code>--http-token FILE</code>).</small></p>",
        html::escape(next)
    );
    html::page("Sign in — textorigin", &body)
}

/// An inspector page shown to a session: the forms' CSRF slots ([`html::CSRF_SLOT`])
/// filled with its token, and a sign-out button at the top. Other pages: the slots
/// emptied (a bearer token or an open server needs none).
pub(super) fn fill_forms(page: Vec<u8>, csrf: Option<&str>) -> Vec<u8> {
    let Ok(page) = String::from_utf8(page) else { return Vec::new() };
    let Some(csrf) = csrf else { return page.replace(html::CSRF_SLOT, "").into_bytes() };
    let field = format!("<input type=\"hidden\" name=\"csrf\" value=\"{}\">", html::escape(csrf));
    let bar = format!(
        "<body><form method=\"post\" action=\"/logout\" style=\"float:right\">{field}<button>Sign out</button></form>"
    );
    page.replacen("<body>", &bar, 1).replace(html::CSRF_SLOT, &field).into_bytes()
}

/// Whether a POST authenticated by a session carries its CSRF token (the form field
/// `csrf` of a form body, or the header `X-CSRF-Token`).
fn csrf_given(request: &Request, csrf: &str) -> bool {
    let form_body = request
        .header("content-type")
        .is_some_and(|t| t.to_ascii_lowercase().starts_with("application/x-www-form-urlencoded"));
    let given = match request.header("x-csrf-token") {
        Some(h) => Some(h.to_string()),
        None if form_body => field(&form(request), "csrf").map(str::to_string),
        None => None,
    };
    given.is_some_and(|g| constant_time_eq(g.as_bytes(), csrf.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 1));
    const B: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 2));

    #[test]
    fn the_bearer_scheme_is_case_insensitive_and_the_token_compared_whole() {
        let s = Sessions::new("s3cret".into());
        let ok = |h: &str| bearer(Some(h)).is_some_and(|t| s.check_token(B, t).is_ok());
        assert!(ok("Bearer s3cret") && ok("bearer s3cret") && ok("BEARER  s3cret "));
        assert!(!ok("Bearer s3creT") && !ok("Bearer s3cret2"));
        assert_eq!((bearer(Some("Basic s3cret")), bearer(Some("s3cret")), bearer(None)), (None, None, None));
    }

    #[test]
    fn a_session_is_made_only_by_the_token_and_ends_at_logout() {
        let s = Sessions::new("secret-token".into());
        assert_eq!(s.login(A, "nope"), Err(Refused::Wrong));
        let id = s.login(A, " secret-token\n").unwrap();
        let header = format!("a=1; {COOKIE}={id}; b=2");
        let csrf = s.check(Some(&header)).expect("a live session");
        assert_eq!(csrf.len(), 64);
        assert_ne!(csrf, id);
        assert!(s.check(Some(&format!("{COOKIE}=x{id}"))).is_none());
        s.logout(Some(&header));
        assert!(s.check(Some(&header)).is_none());
    }

    #[test]
    fn a_new_token_ends_the_old_ones_sessions_and_the_same_token_keeps_them() {
        let s = Sessions::new("old".into());
        let header = format!("{COOKIE}={}", s.login(A, "old").unwrap());
        assert!(!s.set_token("old".into()), "unchanged");
        assert!(s.check(Some(&header)).is_some(), "kept");
        assert!(s.set_token("new".into()));
        assert!(s.check(Some(&header)).is_none(), "ended with its token");
        assert_eq!(s.check_token(A, "old"), Err(Refused::Wrong));
        assert!(s.check_token(A, "new").is_ok());
    }

    #[test]
    fn sign_in_closes_after_too_many_wrong_tokens_for_their_client_only() {
        let s = Sessions::new("t".into());
        for _ in 0..MAX_FAILURES {
            assert_eq!(s.login(A, "x"), Err(Refused::Wrong));
        }
        assert!(matches!(s.login(A, "t"), Err(Refused::Throttled(_))), "even the right token, within the window");
        assert!(matches!(s.check_token(A, "t"), Err(Refused::Throttled(_))), "bearer tokens too");
        assert!(s.login(B, "t").is_ok(), "another client signs in");
    }

    #[test]
    fn each_round_of_wrong_tokens_is_refused_twice_as_long_up_to_the_most() {
        let mut f = Failures::default();
        let t0 = Instant::now();
        let mut now = t0;
        let mut blocks = Vec::new();
        for _ in 0..8 {
            for _ in 0..MAX_FAILURES {
                f.failed(A, now);
            }
            let left = f.refused(A, now).expect("refused after a round");
            assert_eq!(f.refused(B, now), None, "another client is not");
            blocks.push(left.as_secs());
            now += left;
            assert_eq!(f.refused(A, now), None, "free again once it passed");
        }
        assert_eq!(blocks, [60, 120, 240, 480, 960, 1920, 3600, 3600]);
        // An IPv6 client is its /64: another address of it is refused too.
        let v6 = |s: &str| s.parse::<IpAddr>().unwrap();
        for _ in 0..MAX_FAILURES {
            f.failed(v6("2001:db8:1:2::1"), t0);
        }
        assert!(f.refused(v6("2001:db8:1:2:ffff::9"), t0).is_some());
        assert!(f.refused(v6("2001:db8:1:3::1"), t0).is_none());
    }

    #[test]
    fn only_local_paths_are_gone_back_to() {
        assert_eq!(local_path(Some("/documents/%2312?x=1")), "/documents/%2312?x=1");
        for bad in [
            "//evil.example/",
            "https://evil.example/",
            "/\\evil",
            "",
            "x",
            "/\t/evil.example/phish",
            "/x\nSet-Cookie: injected=1",
            "/x\rA: b",
            "/ x",
            "/\u{e9}",
            "/\u{7f}",
        ] {
            assert_eq!(local_path(Some(bad)), "/", "{bad}");
        }
    }
}
