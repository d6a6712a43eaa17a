//! The HTTP shapes of issue 32 (spec/contract.md) the way axum services do them: `Query` and
//! a `String` body for `baseline`, the body as a stream for `upload` (counted frame by frame,
//! never held; hyper answers `Expect: 100-continue` when the body is first polled),
//! tower-http's `CompressionLayer` for `/json` and `ServeDir` behind the same layer for
//! `STATIC_DIR`.

use axum::body::Body;
use axum::extract::Query;
use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use futures_util::StreamExt;
use serde::Deserialize;
use tower_http::compression::predicate::{NotForContentType, Predicate, SizeAbove};
use tower_http::compression::CompressionLayer;
use tower_http::services::ServeDir;

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

async fn baseline_get(Query(q): Query<Sum>) -> String {
    q.total().to_string()
}

async fn baseline_post(Query(q): Query<Sum>, body: String) -> String {
    (q.total() + body.trim().parse::<i64>().unwrap_or(0)).to_string()
}

async fn upload(body: Body) -> Result<String, StatusCode> {
    let mut stream = body.into_data_stream();
    let mut n = 0usize;
    while let Some(frame) = stream.next().await {
        n += frame.map_err(|_| StatusCode::BAD_REQUEST)?.len();
    }
    Ok(n.to_string())
}

/// Compression when the client asks: gzip, br, zstd or deflate, from the first byte (the
/// contract's `/json` is 27 bytes, under the default predicate's 32), never for images.
pub fn compression() -> CompressionLayer<impl Predicate + Clone> {
    CompressionLayer::new().compress_when(
        SizeAbove::new(0)
            .and(NotForContentType::IMAGES)
            .and(NotForContentType::const_new("font/")),
    )
}

/// `/baseline`, `/upload`, and `/static/` when `STATIC_DIR` is set.
pub fn routes() -> Router {
    let mut r = Router::new()
        .route("/baseline", get(baseline_get).post(baseline_post))
        .route("/upload", axum::routing::post(upload));
    if let Ok(dir) = std::env::var("STATIC_DIR") {
        r = r.nest_service(
            "/static",
            tower::ServiceBuilder::new()
                .layer(compression())
                .service(ServeDir::new(dir)),
        );
    }
    r
}
