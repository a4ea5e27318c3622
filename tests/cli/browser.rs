//! The inspector in a real browser: Debian's headless Chromium
//! driven by its chromedriver over the W3C WebDriver protocol (JSON over HTTP: the few
//! commands below, no client crate). Sign-in with the token, the session cookie's
//! flags, a form with and without its CSRF token, a form from another site, sign-out.
//! With `TEXTORIGIN_SCREENSHOTS=DIR` the pages are also saved there (the README's
//! screenshots in `docs/` were made so).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::*;

/// A running chromedriver, killed when dropped.
struct Driver {
    child: Child,
    port: u16,
}

/// The key of an element reference in WebDriver's answers.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

impl Driver {
    fn start() -> Driver {
        let port = free_port();
        let child = std::process::Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver (Debian's chromium-driver, installed by scripts/test.sh)");
        let d = Driver { child, port };
        wait_until("chromedriver to listen", 30, || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
        d
    }

    /// One WebDriver command: the `value` of its answer (a WebDriver error panics).
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.port,
            body.len()
        )
        .unwrap();
        // chromedriver keeps the connection open: the body is read by its length.
        let mut buf = Vec::new();
        let mut chunk = [0u8; 65536];
        let (head_end, length) = loop {
            let n = s.read(&mut chunk).unwrap();
            assert!(n > 0, "chromedriver closed the connection");
            buf.extend_from_slice(&chunk[..n]);
            if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buf[..at]).to_ascii_lowercase();
                let length = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map_or(0, |v| v.trim().parse::<usize>().unwrap());
                break (at + 4, length);
            }
        };
        while buf.len() < head_end + length {
            let n = s.read(&mut chunk).unwrap();
            assert!(n > 0, "chromedriver closed the connection");
            buf.extend_from_slice(&chunk[..n]);
        }
        let v: Value = serde_json::from_slice(&buf[head_end..head_end + length]).unwrap();
        assert!(v["value"]["error"].is_null(), "WebDriver {method} {path}: {}", v["value"]);
        v["value"].clone()
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A headless Chromium window.
struct Browser<'a> {
    driver: &'a Driver,
    session: String,
    _profile: tempfile::TempDir,
}

impl<'a> Browser<'a> {
    fn open(driver: &'a Driver) -> Browser<'a> {
        let profile = tempfile::tempdir().unwrap();
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1100,640",
            &format!("--user-data-dir={}", profile.path().display()),
        ];
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": args},
        }}});
        let v = driver.call("POST", "/session", Some(caps));
        Browser { driver, session: v["sessionId"].as_str().unwrap().to_string(), _profile: profile }
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        self.driver.call(method, &format!("/session/{}{path}", self.session), body)
    }

    fn go(&self, url: &str) {
        self.call("POST", "/url", Some(json!({ "url": url })));
    }

    fn url(&self) -> String {
        self.call("GET", "/url", None).as_str().unwrap().to_string()
    }

    fn source(&self) -> String {
        self.call("GET", "/source", None).as_str().unwrap().to_string()
    }

    fn find(&self, css: &str) -> String {
        let v = self.call("POST", "/element", Some(json!({"using": "css selector", "value": css})));
        v[ELEMENT].as_str().unwrap().to_string()
    }

    fn type_in(&self, css: &str, text: &str) {
        let el = self.find(css);
        self.call("POST", &format!("/element/{el}/value"), Some(json!({ "text": text })));
    }

    fn click(&self, css: &str) {
        let el = self.find(css);
        self.call("POST", &format!("/element/{el}/click"), Some(json!({})));
    }

    fn script(&self, script: &str) -> Value {
        self.call("POST", "/execute/sync", Some(json!({"script": script, "args": []})))
    }

    fn cookies(&self) -> Vec<Value> {
        self.call("GET", "/cookie", None).as_array().unwrap().clone()
    }

    /// Goes to `url` until its page holds `what`: up to three navigations of 20 s each
    /// (under the suite's load one was seen lost, the previous page kept for 30 s).
    fn go_until(&self, url: &str, what: &str) {
        for _ in 0..3 {
            self.go(url);
            if self.shows_within(what, Duration::from_secs(20)) {
                return;
            }
        }
        panic!("no {what:?} in {} after three navigations: {}", self.url(), self.source());
    }

    /// Waits until the page's text holds `what` (a click's navigation has landed).
    fn wait_for(&self, what: &str) {
        assert!(self.shows_within(what, Duration::from_secs(30)), "no {what:?} in {}: {}", self.url(), self.source());
    }

    /// Whether the page's text holds `what` within `limit`.
    fn shows_within(&self, what: &str, limit: Duration) -> bool {
        let t0 = Instant::now();
        while !self.source().contains(what) {
            if t0.elapsed() >= limit {
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        true
    }

    /// A screenshot (PNG) into `dir/name`, also into `$TEXTORIGIN_SCREENSHOTS` when set.
    fn screenshot(&self, dir: &Path, name: &str) -> PathBuf {
        let png = base64(self.call("GET", "/screenshot", None).as_str().unwrap());
        assert!(png.starts_with(b"\x89PNG"), "a screenshot is a PNG");
        if let Some(keep) = std::env::var_os("TEXTORIGIN_SCREENSHOTS") {
            std::fs::write(Path::new(&keep).join(name), &png).unwrap();
        }
        let path = dir.join(name);
        std::fs::write(&path, png).unwrap();
        path
    }
}

/// Standard base64 decoded (a screenshot's PNG).
fn base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let digits: Vec<u8> = text.bytes().filter(|&c| c != b'=' && !c.is_ascii_whitespace()).map(value).collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for group in digits.chunks(4) {
        let n = group.iter().enumerate().fold(0u32, |n, (i, &d)| n | u32::from(d) << (18 - 6 * i));
        out.extend_from_slice(&n.to_be_bytes()[1..group.len()]);
    }
    out
}

impl Drop for Browser<'_> {
    fn drop(&mut self) {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.driver.call("DELETE", &format!("/session/{}", self.session), None)
        }));
    }
}

#[test]
fn a_browser_signs_in_with_the_token_and_its_forms_are_csrf_safe() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("d");
    assert!(ingest(&dir, &[], &[&examples()]).status.success());
    let token = tmp.path().join("token");
    std::fs::write(&token, "correct-horse-battery-staple\n").unwrap();
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let args = ["--http", &format!("127.0.0.1:{port}"), "--http-token", token.to_str().unwrap()];
    let _daemon = Daemon::start(&dir, &args, None);
    wait_until("the inspector", 60, || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
    let driver = Driver::start();
    let b = Browser::open(&driver);

    // A page without a session: the sign-in form, coming back to the page after it.
    b.go(&format!("{base}/report"));
    b.wait_for("Sign in to textorigin");
    assert!(b.url().contains("/login?next=%2Freport"), "{}", b.url());
    b.screenshot(tmp.path(), "login.png");
    b.type_in("input[name=token]", "not-the-token");
    b.click("form button");
    b.wait_for("not the server's token");
    assert!(b.cookies().iter().all(|c| c["name"] != "textorigin_session"), "no session for a wrong token");
    b.type_in("input[name=token]", "correct-horse-battery-staple");
    b.click("form button");
    b.wait_for("Collection report");
    assert!(b.url().ends_with("/report"), "{}", b.url());
    let cookies = b.cookies();
    let session = cookies.iter().find(|c| c["name"] == "textorigin_session").expect("the session cookie");
    assert_eq!(session["httpOnly"], true, "{session}");
    assert_eq!(session["sameSite"], "Strict", "{session}");
    assert_eq!(session["secure"], false, "plain HTTP: not Secure ({session})");
    assert_eq!(b.script("return document.cookie"), "", "a script of the page cannot read the session");

    // A form of the inspector, with its CSRF token: the text's page.
    let copied = std::fs::read_to_string(examples().join("01-harbour-bridge.txt")).unwrap();
    let check = |b: &Browser<'_>| {
        b.go_until(&format!("{base}/"), "Check a text against the collection");
        b.click("details summary");
        b.type_in("#check textarea", &copied);
    };
    check(&b);
    b.click("#check button");
    b.wait_for("01-harbour-bridge");
    assert!(b.source().contains("/documents/%231"), "the checked text links its origin #1");
    // The same form with its CSRF token taken out: refused.
    check(&b);
    b.script("document.querySelector('#check input[name=csrf]').remove()");
    b.click("#check button");
    b.wait_for("CSRF token");
    // A form of another site (an opaque origin) posting to the inspector: refused.
    let evil = format!(
        "data:text/html,<form method=post action='{base}/query'><input name=text value=hello><button>go</button></form>"
    );
    b.go(&evil);
    b.click("button");
    b.wait_for("another origin");

    // The side-by-side page, reached from the document's page.
    b.go(&format!("{base}/documents/03-weekly-roundup"));
    b.click("a.compare");
    b.wait_for("Side by side");
    assert!(b.url().contains("/compare?a=%233&b=%231"), "{}", b.url());
    b.click("#document a.copied");
    assert!(b.url().ends_with("#b-0"), "a passage links its counterpart: {}", b.url());
    b.script("window.scrollTo(0, 0)");
    b.screenshot(tmp.path(), "side-by-side.png");

    // Sign-out: the session ends, pages ask to sign in again.
    b.go(&format!("{base}/"));
    b.wait_for("Sign out");
    b.click("form[action='/logout'] button");
    b.wait_for("Sign in to textorigin");
    assert!(b.cookies().iter().all(|c| c["name"] != "textorigin_session"));
    b.go(&format!("{base}/"));
    b.wait_for("Sign in to textorigin");
    // The API still takes the bearer token, and nothing else.
    let (status, _) = crate::http::post(port, "/api/query", "text/plain", b"hello");
    assert_eq!(status, 401);
}

/// What a reverse proxy in front sees (README, "Teams"): behind TLS the cookie is
/// `Secure` and pages of `https://` the server's name may post; API clients get 401,
/// never the sign-in page; a server without a token has nothing to sign in to.
#[test]
fn behind_a_tls_proxy_the_cookie_is_secure_and_api_clients_are_never_redirected() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("d");
    assert!(ingest(&dir, &[], &[&examples()]).status.success());
    let token = tmp.path().join("token");
    std::fs::write(&token, "tok-123").unwrap();
    let port = free_port();
    let args = [
        "--http",
        &format!("127.0.0.1:{port}"),
        "--http-token",
        token.to_str().unwrap(),
        "--http-host",
        "textorigin.example.org:443",
    ];
    let daemon = Daemon::start(&dir, &args, None);
    wait_until("the inspector", 60, || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
    let host = format!("Host: localhost:{port}\r\nConnection: close\r\n");
    let proxied = "Host: textorigin.example.org:443\r\nConnection: close\r\n";
    let header = |h: &str, name: &str| {
        h.lines().find_map(|l| l.strip_prefix(&format!("{name}: "))).map(str::to_string).unwrap_or_default()
    };
    let (status, h, _) = raw(port, format!("GET /documents/%231?x=1 HTTP/1.1\r\n{host}\r\n").as_bytes());
    assert_eq!((status, header(&h, "Location").as_str()), (303, "/login?next=%2Fdocuments%2F%25231%3Fx%3D1"));
    let (status, _, body) = raw(port, format!("GET /api/documents HTTP/1.1\r\n{host}\r\n").as_bytes());
    assert_eq!(status, 401, "{}", String::from_utf8_lossy(&body));
    let login = |proto: &str, token: &str| {
        let body = format!("token={token}&next=%2Freport");
        raw(
            port,
            format!(
                "POST /login HTTP/1.1\r\n{proxied}X-Forwarded-Proto: {proto}\r\nOrigin: https://textorigin.example.org\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        )
    };
    let (status, h, _) = login("https", "tok-123");
    assert_eq!((status, header(&h, "Location").as_str()), (303, "/report"));
    let cookie = header(&h, "Set-Cookie");
    for flag in ["HttpOnly", "SameSite=Strict", "Secure", "Path=/"] {
        assert!(cookie.contains(flag), "{flag} in {cookie}");
    }
    let (_, h, _) = login("http", "tok-123");
    assert!(!header(&h, "Set-Cookie").contains("Secure"));
    // Another site's page, even over TLS, is refused.
    let (status, _, _) = raw(
        port,
        format!("POST /login HTTP/1.1\r\n{proxied}Origin: https://evil.example\r\nContent-Length: 0\r\n\r\n")
            .as_bytes(),
    );
    assert_eq!(status, 403);
    // The session opens the pages, not the API's POSTs without its CSRF token.
    let session = cookie.split(';').next().unwrap();
    wait_until("the daemon to open its data directory", 60, || {
        raw(port, format!("GET /report HTTP/1.1\r\n{host}Cookie: {session}\r\n\r\n").as_bytes()).0 == 200
    });
    let (status, _, body) = raw(
        port,
        format!("POST /api/query HTTP/1.1\r\n{host}Cookie: {session}\r\nContent-Length: 5\r\n\r\nhello").as_bytes(),
    );
    assert_eq!(status, 403, "{}", String::from_utf8_lossy(&body));
    daemon.stop();

    let port = free_port();
    let daemon = Daemon::start(&dir, &["--http", &format!("127.0.0.1:{port}")], None);
    wait_until("the inspector", 60, || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
    let host = format!("Host: localhost:{port}\r\nConnection: close\r\n");
    let (status, _, _) = raw(port, format!("GET /login HTTP/1.1\r\n{host}\r\n").as_bytes());
    assert_eq!(status, 404);
    let mut body = Vec::new();
    wait_until("the daemon to open its data directory", 60, || {
        let (status, _, b) = raw(port, format!("GET / HTTP/1.1\r\n{host}\r\n").as_bytes());
        body = b;
        status == 200
    });
    assert!(!String::from_utf8_lossy(&body).contains("<!--csrf-->"), "an empty CSRF slot is removed");
    daemon.stop();
}
