//! The timer of a call that becomes a task when it runs long (RULES V2.5),
//! over HTTP: the exchange waits for the call's answer or the promotion's
//! time, whichever comes first; at that time a call that has not answered
//! is promoted and the exchange answered with its task's handle (as JSON,
//! or as the last message of its stream: the response's form does not
//! change).

use std::sync::Arc;

use tokio::sync::oneshot;

use super::response::Answer;
use crate::promotion::Promotion;
use crate::workers::CallState;

/// The answer of the exchange of `call`, whose driver answers on `answer`:
/// the driver's, or the task's handle at `promotion`'s time. The driver's
/// sender stays open meanwhile (a closed one means the client went away,
/// and the call would be skipped).
pub(super) fn in_time(
    mut answer: oneshot::Receiver<Answer>,
    promotion: Arc<Promotion>,
    call: Arc<CallState>,
) -> oneshot::Receiver<Answer> {
    let (mut tx, rx) = oneshot::channel();
    tokio::spawn(async move {
        let due = tokio::time::Instant::from_std(promotion.due);
        // In this order when several are ready: the call's own answer, the
        // client gone, the time.
        tokio::select! {
            biased;
            a = &mut answer => {
                if let Ok(a) = a {
                    let _ = tx.send(a);
                }
            }
            // The client went away first: dropping `answer` tells the
            // driver (the exchange's guard cancels the call).
            () = tx.closed() => {}
            () = tokio::time::sleep_until(due) => {
                // Not for a client that went away (its call is cancelled).
                match promotion.promote(|task| !tx.is_closed() && call.promoted_to(task)) {
                    Some(line) => {
                        let _ = tx.send(Answer { line: Some(line), code: None, outcome: "ok" });
                        // The call goes on as the task's: its driver's
                        // answer (nothing) is awaited, not forwarded.
                        let _ = answer.await;
                    }
                    None => {
                        if let Ok(a) = answer.await {
                            let _ = tx.send(a);
                        }
                    }
                }
            }
        }
    });
    rx
}
