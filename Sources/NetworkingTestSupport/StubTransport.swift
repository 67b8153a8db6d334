import Foundation
import Networking
