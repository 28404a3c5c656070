use super::*;
use crate::protocol::DatabaseReference;

fn container() -> ContainerReference {
    DatabaseReference::new("d").unwrap().container("c").unwrap()
}

fn range(id: &str, min: &str, max: &str) -> TargetRange {
    TargetRange {
        id: id.into(),
        min: min.into(),
        max: max.into(),
    }
}

fn target(next: &NextRequest) -> (String, Option<FeedRange>, PageStart) {
    match next {
        NextRequest::Range {
            range_id,
            part,
            start,
        } => (range_id.clone(), part.clone(), start.clone()),
        NextRequest::PartitionKey { .. } => panic!("not a range request"),
    }
}

fn new_feed(start: ChangeFeedStart, scope: FeedScope) -> FeedState {
    FeedState::new(&container(), start, scope, ChangeFeedMode::LatestVersion).unwrap()
}

#[test]
fn a_container_feed_reads_every_range_round_robin_and_a_poll_ends_when_all_are_quiet() {
    let ranges = [range("0", "", "80"), range("1", "80", "FF")];
    let mut feed = new_feed(ChangeFeedStart::Beginning, FeedScope::Container);
    let first = target(&feed.next_request(&ranges).unwrap());
    assert_eq!(first, ("0".into(), None, PageStart::Beginning));
    assert_eq!(feed.range_count(), 2);
    feed.record_page(Some("\"5\""), true);
    assert_eq!(target(&feed.next_request(&ranges).unwrap()).0, "1");
    feed.record_page(Some("\"3\""), false);
    assert!(!feed.poll_finished());
    let again = target(&feed.next_request(&ranges).unwrap());
    assert_eq!(again, ("0".into(), None, PageStart::After("\"5\"".into())));
    feed.record_page(Some("\"5\""), false);
    assert!(feed.poll_finished());
    feed.start_poll();
    assert!(!feed.poll_finished());
}

#[test]
fn a_split_range_continues_in_its_children_from_the_parents_position() {
    let before = [range("0", "", "FF")];
    let mut feed = new_feed(ChangeFeedStart::Beginning, FeedScope::Container);
    feed.next_request(&before).unwrap();
    feed.record_page(Some("\"42\""), true);
    let token = feed.continuation();

    let after = [range("1", "", "80"), range("2", "80", "FF")];
    let mut resumed = FeedState::new(
        &container(),
        ChangeFeedStart::Continuation(token),
        FeedScope::Container,
        ChangeFeedMode::LatestVersion,
    )
    .unwrap();
    let a = target(&resumed.next_request(&after).unwrap());
    assert_eq!(a, ("1".into(), None, PageStart::After("\"42\"".into())));
    assert_eq!(resumed.range_count(), 2);
    resumed.record_page(Some("\"50\""), true);
    let b = target(&resumed.next_request(&after).unwrap());
    assert_eq!(b, ("2".into(), None, PageStart::After("\"42\"".into())));
}

#[test]
fn a_feed_range_inside_one_partition_sends_its_span() {
    let ranges = [range("0", "", "80"), range("1", "80", "FF")];
    let part = FeedRange::new("90", "A0").unwrap();
    let mut feed = new_feed(ChangeFeedStart::Now, FeedScope::FeedRange(part.clone()));
    let t = target(&feed.next_request(&ranges).unwrap());
    assert_eq!(t, ("1".into(), Some(part), PageStart::Now));
}

#[test]
fn ranges_that_do_not_cover_the_feed_are_an_error() {
    let mut feed = new_feed(ChangeFeedStart::Beginning, FeedScope::Container);
    assert!(feed.next_request(&[range("0", "", "80")]).is_err());
    assert!(feed.next_request(&[]).is_err());
}

#[test]
fn a_partition_key_feed_needs_no_ranges() {
    let mut feed = new_feed(
        ChangeFeedStart::Beginning,
        FeedScope::PartitionKey("p".into()),
    );
    assert!(feed.is_partition_key_scope());
    match feed.next_request(&[]).unwrap() {
        NextRequest::PartitionKey { partition_key, .. } => {
            assert_eq!(partition_key.as_json(), r#"["p"]"#)
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_continuation_is_refused_for_another_container_mode_or_scope() {
    let feed = new_feed(ChangeFeedStart::Beginning, FeedScope::Container);
    let token = feed.continuation();
    let other = DatabaseReference::new("d").unwrap().container("x").unwrap();
    let resume = |c: &ContainerReference, scope, mode| {
        FeedState::new(c, ChangeFeedStart::Continuation(token.clone()), scope, mode)
    };
    let lv = ChangeFeedMode::LatestVersion;
    assert!(resume(&container(), FeedScope::Container, lv).is_ok());
    let table = [
        resume(&other, FeedScope::Container, lv),
        resume(
            &container(),
            FeedScope::Container,
            ChangeFeedMode::AllVersionsAndDeletes,
        ),
        resume(&container(), FeedScope::PartitionKey("p".into()), lv),
        resume(
            &container(),
            FeedScope::FeedRange(FeedRange::new("", "80").unwrap()),
            lv,
        ),
    ];
    for answer in table {
        assert!(answer.unwrap_err().message().contains("made for"));
    }
}

#[test]
fn all_versions_starts_now_or_from_a_continuation() {
    let all = ChangeFeedMode::AllVersionsAndDeletes;
    assert!(FeedState::new(
        &container(),
        ChangeFeedStart::Beginning,
        FeedScope::Container,
        all
    )
    .is_err());
    let feed = FeedState::new(
        &container(),
        ChangeFeedStart::Now,
        FeedScope::Container,
        all,
    )
    .unwrap();
    assert!(feed.is_all_versions());
}

#[test]
fn a_point_in_time_starts_unread_ranges_there() {
    let t = UNIX_EPOCH + Duration::from_secs(1_000);
    let mut feed = new_feed(ChangeFeedStart::PointInTime(t), FeedScope::Container);
    let first = target(&feed.next_request(&[range("0", "", "FF")]).unwrap());
    assert_eq!(first.2, PageStart::Since(t));
}

#[test]
fn a_point_in_time_first_answer_is_a_position_not_a_quiet_range() {
    // The service answers a point-in-time start with no changes and the position the time names;
    // the poll goes on from that position instead of ending there.
    let t = UNIX_EPOCH + Duration::from_secs(1_000);
    let ranges = [range("0", "", "FF")];
    let mut feed = new_feed(ChangeFeedStart::PointInTime(t), FeedScope::Container);
    feed.next_request(&ranges).unwrap();
    feed.record_page(Some("\"7\""), false);
    assert!(!feed.poll_finished());
    let next = target(&feed.next_request(&ranges).unwrap());
    assert_eq!(next.2, PageStart::After("\"7\"".into()));
    feed.record_page(Some("\"7\""), false);
    assert!(
        feed.poll_finished(),
        "a range quiet after its position is quiet"
    );
}
