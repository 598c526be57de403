// Bindings of the commands that write datasets and partitions: graphloom.convert and
// graphloom.partition make the same library calls as `graphloom convert` and `graphloom
// partition`.
#include <torch/csrc/utils/pybind.h>

#include "bindings.h"
#include "graphloom/features/dataset_encoding.h"
#include "graphloom/io/import_job.h"
#include "graphloom/partition/partition_job.h"
#include "graphloom/partition/partition_report.h"

namespace py = pybind11;

namespace graphloom::python {
namespace {

// A property over an enum field, read and written as its name (EnumNames): Python passes
// the same words as the CLI, and a wrong one raises graphloom.OptionError naming `field`.
template <class Job, class E>
auto enum_getter(E Job::*member) {
  return [member](const Job& job) { return std::string(name_of(job.*member)); };
}
template <class Job, class E>
auto enum_setter(const char* field, E Job::*member) {
  return [field, member](Job& job, const std::string& name) {
    job.*member = enum_from_name<E>(field, name);
  };
}

}  // namespace

void bind_jobs(py::module_& module) {
  py::class_<io::ImportJob>(module, "ImportJob")
      .def(py::init<>())
      .def_property("source_format", enum_getter(&io::ImportJob::source_format),
                    enum_setter("source_format", &io::ImportJob::source_format))
      .def_readwrite("source", &io::ImportJob::source)
      .def_readwrite("split", &io::ImportJob::split)
      .def_readwrite("split_scheme", &io::ImportJob::split_scheme)
      .def_property(
          "delimiter",
          [](const io::ImportJob& job) { return std::string(1, job.edge_list.delimiter); },
          [](io::ImportJob& job, const std::string& text) {
            job.edge_list.delimiter = io::parse_delimiter(text);
          })
      .def_property(
          "header", [](const io::ImportJob& job) { return job.edge_list.header; },
          [](io::ImportJob& job, bool value) { job.edge_list.header = value; })
      .def_property(
          "weighted", [](const io::ImportJob& job) { return job.edge_list.weighted; },
          [](io::ImportJob& job, bool value) { job.edge_list.weighted = value; })
      .def_property(
          "num_nodes", [](const io::ImportJob& job) { return job.edge_list.num_nodes; },
          [](io::ImportJob& job, int64_t value) { job.edge_list.num_nodes = value; })
      .def_readwrite("bidirected", &io::ImportJob::bidirected)
      .def_property("self_loops", enum_getter(&io::ImportJob::self_loops),
                    enum_setter("self_loops", &io::ImportJob::self_loops))
      .def_readwrite("link_split", &io::ImportJob::link_split)
      .def_readwrite("seed", &io::ImportJob::seed)
      .def_readwrite("rating_split", &io::ImportJob::rating_split);
  module.def(
      "convert",
      [](const io::ImportJob& job, const std::string& out, const std::string& feature_dtype,
         bool overwrite) {
        py::gil_scoped_release release;
        io::Dataset dataset = io::import_dataset(job);
        features::encode_dataset_features(dataset, feature_dtype);
        io::save_dataset(dataset, out, overwrite);
      },
      py::arg("job"), py::arg("out"), py::arg("feature_dtype"), py::arg("overwrite"));

  py::class_<partition::PartitionJob>(module, "PartitionJob")
      .def(py::init<>())
      .def_readwrite("data", &partition::PartitionJob::data)
      .def_readwrite("out", &partition::PartitionJob::out)
      .def_readwrite("parts", &partition::PartitionJob::parts)
      .def_property("method", enum_getter(&partition::PartitionJob::method),
                    enum_setter("method", &partition::PartitionJob::method))
      .def_property("stream_algorithm", enum_getter(&partition::PartitionJob::stream_algorithm),
                    enum_setter("stream_algorithm", &partition::PartitionJob::stream_algorithm))
      .def_property("metis_scheme", enum_getter(&partition::PartitionJob::metis_scheme),
                    enum_setter("metis_scheme", &partition::PartitionJob::metis_scheme))
      .def_readwrite("balance_train", &partition::PartitionJob::balance_train)
      .def_readwrite("balance_edges", &partition::PartitionJob::balance_edges)
      .def_readwrite("seed", &partition::PartitionJob::seed)
      .def_readwrite("halo", &partition::PartitionJob::halo)
      .def_readwrite("out_edges", &partition::PartitionJob::out_edges)
      .def_readwrite("force", &partition::PartitionJob::force)
      .def_readwrite("command_line", &partition::PartitionJob::command_line);
  module.def(
      "partition",
      [](const partition::PartitionJob& job, const std::string& feature_dtype) {
        py::gil_scoped_release release;
        io::Dataset dataset = io::load_dataset(job.data);
        features::encode_dataset_features(dataset, feature_dtype);
        return partition::describe_partition(partition::partition_dataset(dataset, job));
      },
      py::arg("job"), py::arg("feature_dtype"),
      "Partitions job.data into job.out; returns the parts' table as `graphloom partition` "
      "prints it.");
}

}  // namespace graphloom::python
