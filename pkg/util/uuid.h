#pragma once
// uuidV4: a random RFC 4122 version 4 UUID ("0b6f0e5a-3c1d-4f8e-9a2b-7c4d5e6f7a8b") drawn from the
// caller's generator, so callers choose the seeding (and tests can fix it).

#include <random>
#include <string>

namespace berth::util {

std::string uuidV4(std::mt19937_64& rng);

}  // namespace berth::util
