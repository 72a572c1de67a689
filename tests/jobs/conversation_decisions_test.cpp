// Decisions said in a conversation turn (jobs/conversation_decisions.hpp): exact statements,
// rationales and confidences on hand-made turns.

#include <catch2/catch.hpp>

#include "common/timestamp.hpp"
#include "jobs/conversation_decisions.hpp"

using namespace reflectd;

namespace {

const std::int64_t kMonday = *parse_rfc3339_us("2023-05-08T13:56:00Z");

std::optional<jobs::ExtractedDecision> decided(std::string_view turn) {
  return jobs::decision_from_turn(turn, "", kMonday);
}

}  // namespace

TEST_CASE("conversation decisions: the speaker's own choice, in the third person") {
  const auto office = decided(
      "Jon: Thanks! I decided to run for office again - even though I haven't been successful.");
  REQUIRE(office);
  CHECK(office->statement ==
        "Jon decided to run for office again - even though Jon hasn't been "
        "successful.");
  CHECK(office->rationale.empty());
  CHECK(office->confidence == Approx(0.5));

  const auto topic = decided("Joanna: I chose to write about this because it's really personal.");
  REQUIRE(topic);
  CHECK(topic->statement == "Joanna chose to write about this.");
  CHECK(topic->rationale == "because it's really personal");
  CHECK(topic->confidence == Approx(0.6));

  // The next sentence gives the reason when the sentence has none.
  const auto dogs = decided(
      "Ana: We decided to do doggy playdates on weekends. The dogs get lonely during the week.");
  REQUIRE(dogs);
  CHECK(dogs->statement == "Ana and others decided to do doggy playdates on weekends.");
  CHECK(dogs->rationale == "The dogs get lonely during the week");

  const auto stack = decided("Sam: Let's use Postgres for the new service, it has the extensions.");
  REQUIRE(stack);
  CHECK(stack->statement ==
        "Sam and others will use Postgres for the new service, it has the "
        "extensions.");
  const auto habit = decided("Lee: From now on I'll cook at home on weekdays.");
  REQUIRE(habit);
  CHECK(habit->statement == "From now on Lee will cook at home on weekdays.");

  // The speaker is the agent without a "Name:" prefix.
  const auto agent =
      jobs::decision_from_turn("I'll go with the blue tiles for the kitchen.", "Mia", kMonday);
  REQUIRE(agent);
  CHECK(agent->statement == "Mia will go with the blue tiles for the kitchen.");

  // A question, someone else's choice, or too little after the phrase: no decision.
  CHECK_FALSE(decided("Ben: Have you decided to move to Denver?"));
  CHECK_FALSE(decided("Ben: My sister decided to move to Denver."));
  CHECK_FALSE(decided("Ben: I decided to go."));
  CHECK_FALSE(decided("Ben: That sounds like a plan, good luck!"));
}
