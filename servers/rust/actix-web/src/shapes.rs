//! The HTTP shapes of issue 32 (spec/contract.md) the way actix-web apps do them: `web::Query`
//! and a `String` body for `baseline`, `web::Payload` as a stream for `upload` (counted chunk by
//! chunk, never held; actix-http answers `Expect: 100-continue` itself), the `Compress`
//! middleware for `/json` and actix-files `Files` behind it for `STATIC_DIR`.

use actix_files::Files;
use actix_web::middleware::Compress;
use actix_web::{web, HttpResponse};
use futures_util::StreamExt;
use serde::Deserialize;

#[derive(Deserialize)]
struct Sum {
    a: Option<i64>,
    b: Option<i64>,
}

impl Sum {
    fn total(&self) -> i64 {
        self.a.unwrap_or(0) + self.b.unwrap_or(0)
    }
}

fn plain(n: impl ToString) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain")
        .body(n.to_string())
}

async fn baseline_get(q: web::Query<Sum>) -> HttpResponse {
    plain(q.total())
}

async fn baseline_post(q: web::Query<Sum>, body: String) -> HttpResponse {
    plain(q.total() + body.trim().parse::<i64>().unwrap_or(0))
}

async fn upload(mut body: web::Payload) -> actix_web::Result<HttpResponse> {
    let mut n = 0usize;
    while let Some(chunk) = body.next().await {
        n += chunk?.len();
    }
    Ok(plain(n))
}

/// `/baseline`, `/upload`, `/json` (compressed when asked) and `/static/` when `STATIC_DIR` is
/// set; `json` is the app's handler.
pub fn routes<F, R>(cfg: &mut web::ServiceConfig, json: F)
where
    F: actix_web::Handler<(), Output = R> + Clone + 'static,
    R: actix_web::Responder + 'static,
{
    cfg.route("/baseline", web::get().to(baseline_get))
        .route("/baseline", web::post().to(baseline_post))
        .route("/upload", web::post().to(upload))
        .service(
            web::resource("/json")
                .wrap(Compress::default())
                .route(web::get().to(json)),
        );
    if let Ok(dir) = std::env::var("STATIC_DIR") {
        cfg.service(
            web::scope("/static")
                .wrap(Compress::default())
                .service(Files::new("", dir)),
        );
    }
}
