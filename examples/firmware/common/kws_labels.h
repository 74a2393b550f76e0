// SPDX-License-Identifier: Apache-2.0
// ML-KWS-for-MCU's Pretrained_models/labels.txt, in its models' class order
// (the keyword-spotting examples print the top one).
#pragma once

namespace floe::examples {

inline constexpr const char* kKwsLabels[] = {"_silence_", "_unknown_", "yes", "no",   "up",   "down",
                                             "left",      "right",     "on",  "off",  "stop", "go"};
inline constexpr int kKwsLabelCount = sizeof kKwsLabels / sizeof kKwsLabels[0];

}  // namespace floe::examples
