// graphloom._C's entry point and the package's one exception boundary: graphloom's C++ errors
// become the exceptions of graphloom.errors with the same message (OptionError keeps the name
// of the field, which is the keyword argument's name).
#include <torch/csrc/utils/pybind.h>

#include "bindings.h"
#include "graphloom/base/error.h"

namespace py = pybind11;

namespace graphloom::python {
namespace {

void set_python_error(const char* class_name, const char* message, const std::string* field) {
  py::object type = py::module_::import("graphloom.errors").attr(class_name);
  py::object error = type(message);
  if (field != nullptr) error.attr("field") = *field;
  PyErr_SetObject(type.ptr(), error.ptr());
}

void translate_error(std::exception_ptr pending) {
  try {
    std::rethrow_exception(pending);
  } catch (const OptionError& e) {
    set_python_error("OptionError", e.what(), &e.field());
  } catch (const UsageError& e) {
    set_python_error("OptionError", e.what(), nullptr);
  } catch (const NotFoundError& e) {
    set_python_error("MissingFileError", e.what(), nullptr);
  } catch (const RangeError& e) {
    set_python_error("IdError", e.what(), nullptr);
  } catch (const Error& e) {
    set_python_error("Error", e.what(), nullptr);
  }
}

}  // namespace
}  // namespace graphloom::python

PYBIND11_MODULE(_C, module) {
  module.doc() = "graphloom's C++ engine; use the classes of the graphloom package instead.";
  py::register_exception_translator(&graphloom::python::translate_error);
  graphloom::python::bind_dataset(module);
  graphloom::python::bind_distributed(module);
  graphloom::python::bind_loader(module);
  graphloom::python::bind_jobs(module);
}
