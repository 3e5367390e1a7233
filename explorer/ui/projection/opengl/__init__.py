"""The projection's 3D view and what it needs of OpenGL: whether a context can be made
(:mod:`.support`), the driver loaded ahead by the warm-up (:mod:`.driver`), the first drawing
rehearsed in a worker when 3D is first asked for (:mod:`.rehearsal`), the scene
(:mod:`.scene`, which imports PyOpenGL: import it only once :func:`.support.gl_status` said
OpenGL works) and its texts (:mod:`.texts`). Nothing is imported here, so that asking whether
OpenGL works does not import PyOpenGL."""
