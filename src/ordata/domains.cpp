// The ten business domains and the shared name pools.
#include "ordata/domains.hpp"

#include <algorithm>

namespace trex::ordata {

const std::vector<Domain>& domains() {
  static const std::vector<Domain> kDomains = {
      {"logistics", "USD",
       {"a regional freight carrier", "a parcel delivery company", "a third-party logistics provider", "a port operator"},
       "warehouse", "distribution hub", "pallets", "pallets", "week", "driver", "delivery route",
       {"Harbor", "Airport", "Downtown", "Industrial", "Suburb", "Northline", "Riverside", "Uptown", "Coastal", "Valley", "Ridge", "Lakeside"},
       {"StandardCrate", "ColdBox", "Container", "Flatbed", "MiniParcel", "BulkBag", "Drum", "Tote"},
       "loads", {"Forklift", "Dock", "Crew", "Truck", "Scanner", "Crane"}, "hours",
       "packing filler", "kg", {"Foam", "Paper", "Straw", "Cardboard", "Cork", "Bubble"},
       {"moisture", "recycled", "density"},
       {"FleetUpgrade", "Warehouse", "Telematics", "ColdChain", "Automation", "Drones", "Rail", "Software"},
       "dock workers"},
      {"production", "EUR",
       {"a furniture manufacturer", "an automotive parts supplier", "a steel fabricator", "a packaging plant"},
       "factory", "customer", "steel coils", "tons", "month", "machine", "production order",
       {"Order", "Casting", "Milling", "Welding", "Painting", "Assembly", "Drilling", "Polishing", "Cutting", "Coating", "Testing", "Packing"},
       {"Chair", "Table", "Desk", "Shelf", "Cabinet", "Bed", "Stool", "Bench", "Sofa", "Wardrobe"},
       "units", {"Lathe", "Press", "Oven", "Paintline", "Assembly", "Labor"}, "hours",
       "alloy", "tons", {"ScrapA", "ScrapB", "Pig_iron", "Nickel", "Chrome", "Copper", "Manganese"},
       {"carbon", "nickel", "chrome"},
       {"Robotics", "NewLine", "Maintenance", "Training", "ERP", "Solar", "Recycling", "Press"},
       "operators"},
      {"energy", "USD",
       {"a municipal utility", "a wind farm operator", "a regional grid company", "a fuel distributor"},
       "power station", "substation", "electricity", "MWh", "day", "crew", "maintenance job",
       {"TurbineA", "TurbineB", "Transformer", "Pipeline", "Substation", "Meter", "Boiler", "Cable", "Pump", "Valve", "Inverter", "Battery"},
       {"Diesel", "Gasoline", "Kerosene", "Biofuel", "Heating_oil", "Jet_fuel", "Naphtha", "LPG"},
       "kilolitres", {"Distillation", "Cracker", "Reformer", "Blender", "Storage", "Loading"}, "hours",
       "fuel blend", "kilolitres", {"Crude_light", "Crude_heavy", "Ethanol", "Biodiesel", "Reformate", "Alkylate"},
       {"sulfur", "octane_margin", "aromatics"},
       {"WindPark", "SolarField", "Storage", "GridLink", "HydroUpgrade", "SmartMeters", "Biogas", "Geothermal"},
       "control room operators"},
      {"healthcare", "USD",
       {"a hospital network", "a public health agency", "a pharmaceutical distributor", "a clinic group"},
       "pharmacy depot", "hospital", "vaccine doses", "boxes", "week", "nurse", "ward task",
       {"Triage", "Surgery", "Pediatrics", "Oncology", "Radiology", "Cardiology", "Dialysis", "Maternity", "Pharmacy", "Lab", "Rehab", "Emergency"},
       {"Saline", "Gloves", "Masks", "Syringes", "Bandages", "Gowns", "Tests", "Kits"},
       "cases", {"Sterilizer", "Packing", "Cleanroom", "Staff", "Freezer", "Lab"}, "hours",
       "nutrition formula", "kg", {"Soy", "Whey", "Oat", "Rice", "Pea", "Corn", "Milk_powder"},
       {"protein", "fat", "fiber"},
       {"Telehealth", "MRI", "NewWard", "Training", "Records", "Vaccines", "Mobile_clinic", "Lab"},
       "nurses"},
      {"finance", "USD",
       {"an asset manager", "a pension fund", "a family office", "a credit union"},
       "branch", "region", "cash", "thousand USD", "quarter", "analyst", "audit task",
       {"Audit", "Compliance", "Risk", "Tax", "Valuation", "Reporting", "Treasury", "Credit", "Due_diligence", "Payroll", "Hedging", "Forecast"},
       {"Loan", "Mortgage", "Card", "Deposit", "Bond", "Lease", "Insurance", "Annuity"},
       "contracts", {"Underwriting", "Legal", "Advisory", "Operations", "IT", "Sales"}, "hours",
       "bond fund mix", "thousand USD", {"Treasury", "Municipal", "Corporate_AA", "Corporate_BBB", "HighYield", "Emerging"},
       {"yield", "duration_score", "foreign"},
       {"Bonds", "Equity", "RealEstate", "Gold", "Infrastructure", "PrivateDebt", "Cash", "Commodities"},
       "tellers"},
      {"agriculture", "USD",
       {"a farming cooperative", "a grain trader", "a dairy producer", "an agribusiness"},
       "farm", "mill", "grain", "tons", "season", "harvester", "field",
       {"FieldA", "FieldB", "FieldC", "Orchard", "Vineyard", "Pasture", "Greenhouse", "Meadow", "Plot", "Terrace", "Paddock", "Grove"},
       {"Wheat", "Corn", "Soybean", "Barley", "Oats", "Canola", "Rice", "Sunflower"},
       "tons", {"Land", "Water", "Labor", "Tractor", "Storage", "Fertilizer"}, "units",
       "animal feed", "kg", {"Corn", "Soymeal", "Barley", "Alfalfa", "Fishmeal", "Oats", "Bran"},
       {"protein", "fat", "fiber"},
       {"Irrigation", "Silo", "Tractor", "Greenhouse", "Orchard", "Solar", "Drainage", "Seeds"},
       "farm hands"},
      {"education", "USD",
       {"a school district", "a university", "a training institute", "a tutoring company"},
       "print centre", "school", "textbooks", "boxes", "term", "teacher", "course",
       {"Algebra", "Biology", "Chemistry", "History", "Physics", "Literature", "Art", "Music", "Economics", "Geography", "Coding", "Statistics"},
       {"Workshop", "Seminar", "Bootcamp", "Lecture", "Lab_course", "Webinar", "Tutorial", "Camp"},
       "sessions", {"Classroom", "Lab", "Instructor", "Projector", "Library", "Gym"}, "hours",
       "paper stock", "tons", {"Pulp_A", "Pulp_B", "Recycled", "Bamboo", "Cotton", "Hemp"},
       {"brightness", "recycled", "strength"},
       {"Laptops", "Library", "Sports", "Labs", "Scholarships", "Online", "Teacher_training", "Cafeteria"},
       "teaching assistants"},
      {"environment", "EUR",
       {"a waste management company", "a water authority", "a recycling firm", "a conservation agency"},
       "collection point", "treatment plant", "waste", "tons", "week", "crew", "cleanup site",
       {"Beach", "River", "Park", "Forest", "Wetland", "Landfill", "Harbor", "Quarry", "Lake", "Dune", "Marsh", "Canal"},
       {"Compost", "Pellets", "Biochar", "Mulch", "Recycled_glass", "Granulate", "Fiber", "Soil"},
       "tons", {"Shredder", "Sorter", "Kiln", "Crew", "Truck", "Press"}, "hours",
       "soil mix", "tons", {"Compost", "Sand", "Peat", "Clay", "Bark", "Loam"},
       {"organic", "clay", "moisture"},
       {"Wetlands", "Reforestation", "Filters", "Solar", "Recycling", "Sensors", "Biogas", "Cleanup"},
       "inspectors"},
      {"computing", "USD",
       {"a cloud provider", "a data-centre operator", "a software company", "a streaming service"},
       "data centre", "region", "compute capacity", "server units", "hour", "server", "batch job",
       {"Indexing", "Backup", "Training", "Rendering", "Analytics", "Billing", "Search", "Transcode", "ETL", "Reporting", "Crawl", "Compile"},
       {"SmallVM", "MediumVM", "LargeVM", "GPUNode", "StorageNode", "Container", "DBInstance", "CacheNode"},
       "instances", {"CPU", "Memory", "Storage", "Network", "GPU", "Licenses"}, "units",
       "instance mix", "units", {"Spot", "OnDemand", "Reserved", "Edge", "Burst", "Dedicated"},
       {"availability", "gpu_share", "ssd_share"},
       {"Servers", "Cooling", "Network", "Security", "Storage", "AI_cluster", "Backup", "Edge"},
       "on-call engineers"},
      {"generic", "USD",
       {"a company", "an organisation", "a business", "a firm"},
       "supplier", "customer", "goods", "units", "period", "worker", "task",
       {"TaskA", "TaskB", "TaskC", "TaskD", "TaskE", "TaskF", "TaskG", "TaskH", "TaskI", "TaskJ", "TaskK", "TaskL"},
       {"ProductA", "ProductB", "ProductC", "ProductD", "ProductE", "ProductF", "ProductG", "ProductH"},
       "units", {"ResourceA", "ResourceB", "ResourceC", "ResourceD", "ResourceE", "ResourceF"}, "units",
       "mixture", "units", {"InputA", "InputB", "InputC", "InputD", "InputE", "InputF"},
       {"quality", "purity", "strength"},
       {"OptionA", "OptionB", "OptionC", "OptionD", "OptionE", "OptionF", "OptionG", "OptionH"},
       "workers"},
  };
  return kDomains;
}

int num_domains() { return int(domains().size()); }

const std::vector<std::string>& city_names() {
  static const std::vector<std::string> kCities = {
      "Lyon", "Porto", "Dallas", "Denver", "Austin", "Boston", "Turin", "Leeds", "Bremen", "Graz", "Malmo", "Split",
      "Tampa", "Reno", "Omaha", "Tulsa", "Quebec", "Osaka", "Pune", "Perth", "Cork", "Ghent", "Basel", "Bergen",
      "Nantes", "Seville", "Krakow", "Riga", "Tartu", "Bilbao", "Genoa", "Aarhus", "Salem", "Fresno", "Boise", "Dover",
      "Lisbon", "Madrid", "Hamburg", "Dublin", "Oslo", "Vienna", "Prague", "Milan", "Nice", "Bonn", "Utrecht", "Lille"};
  return kCities;
}

const std::vector<std::string>& person_names() {
  static const std::vector<std::string> kPeople = {
      "Alice", "Bruno", "Chen", "Dana", "Emil", "Fatima", "Goran", "Hana", "Ivan", "Julia", "Kofi", "Lena",
      "Mateo", "Nina", "Omar", "Priya", "Quinn", "Rosa", "Sami", "Tara", "Umar", "Vera", "Wen", "Yusuf",
      "Zoe", "Aiko", "Boris", "Carla", "Deniz", "Elif"};
  return kPeople;
}

std::vector<std::string> pick_labels(Rng& rng, const std::vector<std::string>& pool, int count) {
  std::vector<std::string> shuffled = pool;
  rng.shuffle(shuffled);
  std::vector<std::string> out;
  out.reserve(size_t(count));
  for (int i = 0; i < count; ++i) {
    size_t k = size_t(i) % shuffled.size();
    int round = i / int(shuffled.size());
    out.push_back(round == 0 ? shuffled[k] : shuffled[k] + "_" + std::to_string(round + 1));
  }
  return out;
}

}  // namespace trex::ordata
