// Compiled only to make the precompiled header of cmake/pch/pch.h (cmake/ReckonTarget.cmake).
