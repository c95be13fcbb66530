// The attached data files of DPS problems and code-only tasks, in two layouts:
//  - JSON only: data.json holds every set and parameter (data_json of the instance);
//  - JSON + CSV: each set's 1-D parameters form one table <set>.csv (a column per parameter), each 2-D
//    parameter one matrix <param>.csv (rows: first set, columns: second set); data.json keeps the sets
//    and the scalars.
// read_data_files() is the reference reader (the same rules as the Python loader the answers contain):
// the pipeline rebuilds the full data object from the files and requires it to equal data.json of the
// instance, so a file that loses or changes a number is caught per sample.
#pragma once
#include <string>
#include <vector>

#include "ordata/instance.hpp"

namespace trex::ordata {

enum class DataLayout { JsonOnly, JsonCsv };
const char* to_string(DataLayout l);  // "json" | "json_csv"

struct DataFile {
  enum Kind { Json, Columns, Matrix } kind = Json;
  std::string name;     // data.json, plants.csv, cost.csv
  std::string key;      // Matrix: the parameter key; Columns: the set key
  std::string content;  // file bytes
};

// The files of an instance (data.json first). JsonCsv yields JSON only when the instance has no 1-D or
// 2-D parameter or when a CSV name would collide with another file.
std::vector<DataFile> data_files(const Instance& inst, const Json& data, DataLayout layout);
DataLayout layout_of(const std::vector<DataFile>& files);

// Rebuilds the full data object (sets, scalars, {label: v}, {label: {label: v}}) from the files; a cell
// of digits (optional leading '-') is an integer, anything else a float. Throws trex::Error naming the
// file and line on malformed content.
Json read_data_files(const std::vector<DataFile>& files);

// Python statements that load the files into `data` (a dict equal to json.load of the full data.json);
// needs `import json` (and `import csv` when there are CSV files: python_imports()).
std::string python_imports(const std::vector<DataFile>& files);
std::string python_data_loader(const std::vector<DataFile>& files);

// "- `key`: description (unit), by set (file)" for every set and parameter of the layout.
std::string data_key_list(const Instance& inst, const std::vector<DataFile>& files);

// The fenced blocks shown in a DPS statement: "### name\n```json|csv\n...\n```" per file.
std::string file_blocks(const std::vector<DataFile>& files);

// RFC 4180 parsing of a CSV text into rows of cells (quotes, doubled quotes, CRLF); `name` for errors.
std::vector<std::vector<std::string>> parse_csv(const std::string& text, const std::string& name);

}  // namespace trex::ordata
