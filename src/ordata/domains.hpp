// Business domains (report §8: ten domains) that give the generated problems their entity names,
// goods, units and currency. Every family draws its labels from the chosen domain so that text,
// data and units stay consistent within one problem.
#pragma once
#include <string>
#include <vector>

#include "util/rng.hpp"

namespace trex::ordata {

struct Domain {
  std::string name;                       // metadata value, e.g. "logistics"
  std::string currency;                   // "USD", "EUR", ...
  std::vector<std::string> organisations; // story subjects: "a regional freight carrier"
  std::string source, sink;               // supply/demand site words: "warehouse", "store"
  std::string good, unit;                 // shipped good and its unit: "pallets", "pallets"
  std::string period;                     // planning period: "week", "month"
  std::string worker, job;                // assignment agents and jobs: "driver", "delivery route"
  std::vector<std::string> jobs;          // job labels
  std::vector<std::string> products;      // product labels (capacity/production planning)
  std::string product_unit;               // "units", "batches"
  std::vector<std::string> resources;     // resource labels (hours per period)
  std::string resource_unit;              // "hours"
  std::string blend, blend_unit;          // blended product: "animal feed", "kg"
  std::vector<std::string> ingredients;   // blending inputs
  std::vector<std::string> attributes;    // blend attributes measured in percent
  std::vector<std::string> assets;        // investment options (portfolio)
  std::string staff;                      // scheduled staff: "nurses"
};

const std::vector<Domain>& domains();  // the ten domains, fixed order
int num_domains();

// Labels: `count` distinct entries from `pool` in a seeded order; extra entries get numeric
// suffixes ("Pump_2") when the pool is too small.
std::vector<std::string> pick_labels(Rng& rng, const std::vector<std::string>& pool, int count);
const std::vector<std::string>& city_names();
const std::vector<std::string>& person_names();

}  // namespace trex::ordata
