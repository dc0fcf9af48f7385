//! The explorer's HTTP server: a few worker threads taking requests from one
//! `tiny_http` listener, bound to loopback unless told otherwise, stopping cleanly on
//! Ctrl-C (or when the caller's stop flag is set).

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use super::{Explorer, Reply, MAX_URL};

/// Where and how to serve.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ServeOptions {
    /// Address to bind (127.0.0.1 by default: the explorer is for this machine).
    pub addr: SocketAddr,
    /// Worker threads.
    pub workers: usize,
}

impl Default for ServeOptions {
    /// This machine only (127.0.0.1), port 8680, four workers (`thorbook explore`'s
    /// defaults).
    fn default() -> ServeOptions {
        ServeOptions { addr: SocketAddr::from(([127, 0, 0, 1], 8680)), workers: 4 }
    }
}

/// Serves until `stop` is set; `ready` is called with the bound address (port 0 picks
/// a free one) once requests are accepted.
pub fn serve(
    explorer: Arc<Explorer>,
    options: &ServeOptions,
    stop: crate::work::StopHandle,
    ready: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let stop = stop.shared();
    let server = tiny_http::Server::http(options.addr).map_err(std::io::Error::other)?;
    let addr = server.server_addr().to_ip().ok_or_else(|| std::io::Error::other("not an IP listener"))?;
    let server = Arc::new(server);
    ready(addr);
    let workers: Vec<_> = (0..options.workers.max(1))
        .map(|_| {
            let (server, explorer, stop) = (server.clone(), explorer.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    // Wake up now and then to notice the stop flag.
                    let request = match server.recv_timeout(Duration::from_millis(200)) {
                        Ok(Some(r)) => r,
                        Ok(None) => continue,
                        Err(_) => break,
                    };
                    let url = request.url().to_string();
                    let method = request.method().as_str().to_string();
                    let reply = if url.len() > MAX_URL {
                        explorer.respond(&method, &url[..MAX_URL + 1])
                    } else {
                        explorer.respond(&method, &url)
                    };
                    let _ = request.respond(response(reply, method == "HEAD"));
                }
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    Ok(())
}

fn response(reply: Reply, head: bool) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    let body = if head { Vec::new() } else { reply.body };
    let mut r = tiny_http::Response::from_data(body).with_status_code(reply.status);
    for (k, v) in [
        ("Content-Type", reply.content_type),
        ("Cache-Control", "no-store"),
        ("X-Content-Type-Options", "nosniff"),
        (
            "Content-Security-Policy",
            "default-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src 'self' data:",
        ),
    ] {
        if let Ok(h) = tiny_http::Header::from_bytes(k.as_bytes(), v.as_bytes()) {
            r.add_header(h);
        }
    }
    r
}
