//! A server inside the test process that passes the contract's `hello` checks (keep-alive,
//! HTTP/1.0, 404), for the tests of `verify --url` and `run --url`.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;

/// An HTTP/1.1 server inside this test process, answering `/hello` until the test ends.
pub fn in_process_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut out = stream;
                loop {
                    let mut head = String::new();
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        if line == "\r\n" {
                            break;
                        }
                        head.push_str(&line);
                    }
                    let (status, body) = if head.starts_with("GET /hello ") {
                        ("200 OK", "Hello World!")
                    } else {
                        ("404 Not Found", "Not Found")
                    };
                    let http10 = head.lines().next().is_some_and(|l| l.ends_with("HTTP/1.0"));
                    let keep = head.to_ascii_lowercase().contains("connection: keep-alive");
                    // An HTTP/1.0 client keeps the connection only when told so (the contract).
                    let connection = if http10 && keep {
                        "Connection: keep-alive\r\n"
                    } else {
                        ""
                    };
                    let reply = format!(
                        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\n{connection}Content-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if out.write_all(reply.as_bytes()).is_err() || (http10 && !keep) {
                        return;
                    }
                }
            });
        }
    });
    port
}
