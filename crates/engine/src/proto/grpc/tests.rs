use super::*;

fn ok_call() -> (Response, Call) {
    let resp = Response {
        status: 200,
        close: false,
        body_len: 7,
        body_hash: 1,
        wire_len: 7,
        encoding: Default::default(),
        undecodable: false,
    };
    let mut call = Call::default();
    call.content_type = Some(hpack::CONTENT_GRPC);
    call.grpc_status = Some(0);
    call.trailers = true;
    call.deframe(&[0, 0, 0, 0, 2, 8, 42]);
    (resp, call)
}

#[test]
fn a_call_with_status_zero_trailers_and_whole_messages_passes() {
    let (resp, call) = ok_call();
    assert_eq!(judge(&resp, &call, None, Some((7, 1))), None);
    assert_eq!(
        judge(&resp, &call, None, Some((7, 2))),
        Some(GrpcCause::Verify)
    );
}

#[test]
fn each_fault_is_named_by_its_cause() {
    let (resp, call) = ok_call();
    let bad = Response {
        status: 503,
        ..resp
    };
    assert_eq!(judge(&bad, &call, None, None), Some(GrpcCause::HttpStatus));
    let mut internal = call;
    internal.grpc_status = Some(13);
    assert_eq!(
        judge(&resp, &internal, None, None),
        Some(GrpcCause::Status(13))
    );
    let mut untrailed = call;
    untrailed.trailers = false;
    assert_eq!(
        judge(&resp, &untrailed, None, None),
        Some(GrpcCause::NoTrailers)
    );
    let mut json = call;
    json.content_type = Some(hpack::CONTENT_OTHER);
    assert_eq!(
        judge(&resp, &json, None, None),
        Some(GrpcCause::ContentType)
    );
    let mut long = call;
    long.deframe(&[0, 0, 0, 0, 1, 9, 9]);
    assert_eq!(judge(&resp, &long, None, None), Some(GrpcCause::Framing));
}

#[test]
fn a_stream_ending_ok_with_another_number_of_messages_fails_by_message_count() {
    let (resp, call) = ok_call();
    assert_eq!(judge(&resp, &call, Some(1), None), None);
    assert_eq!(
        judge(&resp, &call, Some(2), None),
        Some(GrpcCause::MessageCount)
    );
}
