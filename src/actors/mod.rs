//! The actor shell: a `Coordinator` (supervisor) owning one audit, detective actors, judge
//! actors and the Chief Justice actor, exchanging typed messages.
